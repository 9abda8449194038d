// The generated Unicode ranges (hf_unicode_table.cpp, made by tools/make_unicode_table.py).
// Only hf_unicode.cpp reads them; everything else asks hf_unicode.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnsim::model::hf::table {

struct Range {
  uint32_t lo, hi;  // inclusive
};

extern const char* const kUnicodeVersion;
extern const Range kLetter[];
extern const size_t kLetterSize;
extern const Range kNumber[];
extern const size_t kNumberSize;
extern const Range kNfcUnstable[];
extern const size_t kNfcUnstableSize;

}  // namespace attnsim::model::hf::table
