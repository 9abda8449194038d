#include "model/text/hf_bytes.h"

#include <array>

#include "model/text/hf_unicode.h"

namespace attnsim::model::hf {

namespace {

bool printable(int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

struct Tables {
  std::array<uint32_t, 256> to_char{};
  std::array<int, 324> to_byte{};  // code points 0..323 (256 + 68 - 1 is the largest used)
  std::array<std::string, 256> keys;
  Tables() {
    to_byte.fill(-1);
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      to_char[b] = printable(b) ? static_cast<uint32_t>(b) : next++;
      to_byte[to_char[b]] = b;
      append_utf8(keys[b], to_char[b]);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

uint32_t byte_to_char(uint8_t byte) { return tables().to_char[byte]; }

std::optional<uint8_t> char_to_byte(uint32_t cp) {
  if (cp >= tables().to_byte.size() || tables().to_byte[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(tables().to_byte[cp]);
}

const std::string& byte_key(uint8_t byte) { return tables().keys[byte]; }

}  // namespace attnsim::model::hf
