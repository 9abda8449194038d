// Reading a whole text file from outside (a lesson, a config) without trusting it: only a
// regular file is read (a FIFO would block forever, /dev/zero never ends), and only up to
// `max_bytes` (a bigger file is refused before it is read). Throws Error naming the path.
// (.npy inputs have their own reader, whose cap is the header's own claim: npy.h.)
#pragma once

#include <cstdint>
#include <string>

namespace attnsim {

std::string read_text_file(const std::string& path, int64_t max_bytes);

}  // namespace attnsim
