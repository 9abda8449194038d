// The software half rounding (engine/half.h) against the compiler's _Float16, which GCC on
// x86-64 has: every float whose top 20 bits vary (both signs, every exponent, the fraction's
// high bits, low bits set to probe ties and sticky bits), plus the edges by name.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "engine/half.h"

#if defined(__FLT16_MAX__)
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0; }

}  // namespace

TEST_CASE("round_to_half gives _Float16's bits for every exponent, tie and subnormal") {
  int64_t checked = 0, wrong = 0;
  for (uint32_t hi = 0; hi < (1u << 20); ++hi)
    for (uint32_t lo : {0u, 1u, 0x7ffu, 0x800u, 0x801u, 0xfffu}) {
      const float x = from_bits((hi << 12) | lo);
      const float want = static_cast<float>(static_cast<_Float16>(x));
      if (!same(attnsim::round_to_half(x), want) && ++wrong <= 5) INFO("bits " << ((hi << 12) | lo));
      ++checked;
    }
  CHECK(checked == 6 * (1 << 20));
  CHECK(wrong == 0);
  CHECK(attnsim::round_to_half(65504.0f) == 65504.0f);
  CHECK(std::isinf(attnsim::round_to_half(65520.0f)));
  CHECK(attnsim::round_to_half(65519.0f) == 65504.0f);
  CHECK(attnsim::round_to_half(1.0f + 1.0f / 2048) == 1.0f);          // a tie goes to even
  CHECK(attnsim::round_to_half(1.0f + 3.0f / 2048) == 1.0f + 2.0f / 1024);
  CHECK(attnsim::round_to_half(std::ldexp(1.0f, -25)) == 0.0f);      // half the smallest subnormal: to even (0)
  CHECK(attnsim::round_to_half(std::ldexp(1.5f, -25)) == std::ldexp(1.0f, -24));
  CHECK(std::signbit(attnsim::round_to_half(-0.0f)));
  CHECK(std::isnan(attnsim::round_to_half(std::numeric_limits<float>::quiet_NaN())));
}
#endif

TEST_CASE("float_to_half_bits inverts half_bits_to_float on every half and rounds as round_to_half", "[engine]") {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = attnsim::half_bits_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      CHECK(std::isnan(attnsim::half_bits_to_float(attnsim::float_to_half_bits(f))));
      continue;
    }
    REQUIRE(attnsim::float_to_half_bits(f) == h);
  }
  for (float x : {0.1f, -3.14159f, 1e-6f, -7e-8f, 65519.0f, 65520.0f, 1e30f, 2.0e-5f})
    CHECK(attnsim::half_bits_to_float(attnsim::float_to_half_bits(x)) == attnsim::round_to_half(x));
}
