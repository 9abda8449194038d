// UTF-8 walking and the Unicode classes the tokenizers' split patterns name (\p{L}, \p{N}, \s).
//
// Text from a user may hold bytes that are not UTF-8. The walk never fails: each invalid byte
// (a stray continuation byte, a truncated or overlong sequence, a surrogate) is one unit of its
// own, of no class (neither letter, number nor space), so every byte of the input lands in
// exactly one unit and a tokenizer built on it can round-trip the bytes exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attnsim::model::hf {

inline constexpr uint32_t kInvalidByte = 0xFFFFFFFF;  // the code point of a unit that is one invalid byte

struct CodeUnit {
  uint32_t cp;  // the code point, or kInvalidByte
  size_t len;   // its bytes in the text: 1..4
};

// The unit starting at text[i] (i < text.size()).
CodeUnit next_unit(std::string_view text, size_t i);

bool is_letter(uint32_t cp);      // \p{L}
bool is_number(uint32_t cp);      // \p{N}
bool is_whitespace(uint32_t cp);  // \s: the White_Space property, as Rust's regex and Oniguruma have it
bool nfc_may_change(uint32_t cp); // NFC might change or compose it (hf_unicode_table.h)
const char* unicode_version();

void append_utf8(std::string& out, uint32_t cp);
// True when the whole of `bytes` is well-formed UTF-8.
bool valid_utf8(std::string_view bytes);

}  // namespace attnsim::model::hf
