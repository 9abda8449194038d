#include "model/text/hf_unicode.h"

#include <algorithm>

#include "model/text/hf_unicode_table.h"

namespace attnsim::model::hf {

namespace {

bool in(const table::Range* ranges, size_t n, uint32_t cp) {
  const table::Range* end = ranges + n;
  const table::Range* it = std::upper_bound(ranges, end, cp, [](uint32_t c, const table::Range& r) { return c < r.lo; });
  return it != ranges && cp <= (it - 1)->hi;
}

}  // namespace

CodeUnit next_unit(std::string_view text, size_t i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) return {b0, 1};
  // lead byte -> sequence length and the smallest code point that length may encode (no overlongs)
  size_t len;
  uint32_t cp, min;
  if (b0 >= 0xC2 && b0 <= 0xDF) len = 2, cp = b0 & 0x1F, min = 0x80;
  else if (b0 >= 0xE0 && b0 <= 0xEF) len = 3, cp = b0 & 0x0F, min = 0x800;
  else if (b0 >= 0xF0 && b0 <= 0xF4) len = 4, cp = b0 & 0x07, min = 0x10000;
  else return {kInvalidByte, 1};
  if (i + len > text.size()) return {kInvalidByte, 1};
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) return {kInvalidByte, 1};
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {kInvalidByte, 1};
  return {cp, len};
}

bool is_letter(uint32_t cp) { return cp != kInvalidByte && in(table::kLetter, table::kLetterSize, cp); }
bool is_number(uint32_t cp) { return cp != kInvalidByte && in(table::kNumber, table::kNumberSize, cp); }
bool nfc_may_change(uint32_t cp) {
  return cp != kInvalidByte && in(table::kNfcUnstable, table::kNfcUnstableSize, cp);
}

bool is_whitespace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

const char* unicode_version() { return table::kUnicodeVersion; }

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool valid_utf8(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    const CodeUnit u = next_unit(bytes, i);
    if (u.cp == kInvalidByte) return false;
    i += u.len;
  }
  return true;
}

}  // namespace attnsim::model::hf
