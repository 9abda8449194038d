// Animated GIF through Debian's giflib: one global 256-colour palette for all frames
// (median cut over a sample of every frame, so colours do not flicker between frames), each
// frame with its own delay, looping forever. Encoded in memory, then written whole through
// engine/atomic_file.h like every sink.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnsim::figure {

struct GifFrame {
  std::vector<uint8_t> rgba;  // width x height, top row first
  int delay_cs = 8;           // hundredths of a second
};

bool write_gif(const std::string& path, int width, int height, const std::vector<GifFrame>& frames,
               std::string* error);

}  // namespace attnsim::figure
