// The one refusal of a size that would not fit: every command predicts its bytes first (the
// model's, the tokenizer's, a decode's) and asks here before it allocates.
#pragma once

#include <cstdint>
#include <string>

namespace attnsim {

// Throws Error when need > the limit (mem_limit bytes, or 0: the engine's default, 75 % of
// physical memory or of the address-space limit): "WHAT needs about 6.40 GiB (N bytes), over
// the limit of 1.00 KiB (--mem-limit); HINT".
void check_fits(int64_t need, int64_t mem_limit, const std::string& what, const std::string& hint);

}  // namespace attnsim
