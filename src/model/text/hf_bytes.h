// GPT-2's bytes-to-unicode table: byte-level BPE works on text whose every byte has been
// replaced by one printable code point, so a vocabulary of strings can hold any byte.
//   printable bytes ! .. ~, ¡ .. ¬, ® .. ÿ  -> themselves (U+0021.., U+00A1.., U+00AE..)
//   the other 68 (controls, space, 0x7F-0xA0, 0xAD) -> U+0100, U+0101, ... in byte order
// so space (0x20) is 'Ġ' (U+0120) and newline (0x0A) is 'Ċ' (U+010A).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace attnsim::model::hf {

uint32_t byte_to_char(uint8_t byte);
std::optional<uint8_t> char_to_byte(uint32_t cp);
// The UTF-8 form of byte_to_char(byte): what a vocabulary entry holds for that byte.
const std::string& byte_key(uint8_t byte);

}  // namespace attnsim::model::hf
