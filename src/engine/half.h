// IEEE 754 binary16 rounding in software: float -> nearest half (ties to even) -> float.
//
// The fp16 softmax bug's reference (reference.cpp) rounds every intermediate to half. A
// compiler's _Float16 does the same, but not every target has one (WebAssembly with
// Debian's emscripten 3.1.6 does not), so the rounding is spelled out on the float's bits;
// test_half.cpp checks it against _Float16 where the compiler has it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace attnsim {

namespace half_detail {
// std::bit_cast, which emscripten 3.1.6's libc++ does not have yet.
template <class To, class From>
To bits(From x) {
  static_assert(sizeof(To) == sizeof(From));
  To y;
  std::memcpy(&y, &x, sizeof y);
  return y;
}
}  // namespace half_detail

inline float round_to_half(float x) {
  const uint32_t u = half_detail::bits<uint32_t>(x);
  const uint32_t sign = u & 0x80000000u;
  uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return x;  // inf and NaN stay as they are
  // 65520 is halfway between the largest half (65504) and 65536: ties to even go up, to inf.
  if (a >= 0x477ff000u) return half_detail::bits<float>(sign | 0x7f800000u);
  if (a < 0x38800000u) {  // below 2^-14: a subnormal half, a multiple of 2^-24
    const float q = std::nearbyint(std::fabs(x) * 16777216.0f) / 16777216.0f;  // exact scalings
    return half_detail::bits<float>(sign | half_detail::bits<uint32_t>(q));
  }
  // A normal half keeps 10 of the float's 23 fraction bits: round the low 13 away, ties to
  // even (a carry into the exponent is the right answer too).
  a += 0x0fffu + ((a >> 13) & 1u);
  return half_detail::bits<float>(sign | (a & ~0x1fffu));
}

// The float a stored IEEE binary16 (F16) bit pattern stands for; exact (every half is a float).
inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, frac = h & 0x3ffu;
  if (exp == 0x1fu) return half_detail::bits<float>(sign | 0x7f800000u | (frac << 13));  // inf, NaN
  if (exp == 0) {  // zero or subnormal: frac · 2^-24
    const float v = static_cast<float>(frac) / 16777216.0f;
    return sign ? -v : v;
  }
  return half_detail::bits<float>(sign | ((exp + 112u) << 23) | (frac << 13));  // rebias 15 -> 127
}

// The IEEE binary16 bit pattern of the half nearest x (round_to_half's rounding): the inverse
// of half_bits_to_float on every half; NaN stays a quiet NaN.
inline uint16_t float_to_half_bits(float x) {
  const uint32_t r = half_detail::bits<uint32_t>(round_to_half(x));
  const uint16_t sign = static_cast<uint16_t>((r >> 16) & 0x8000u);
  const uint32_t a = r & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (a >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // inf
  if (a < 0x38800000u)  // subnormal or zero: an exact multiple of 2^-24 below 2^-14
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(half_detail::bits<float>(a) * 16777216.0f));
  return static_cast<uint16_t>(sign | (((a >> 23) - 112u) << 10) | ((a >> 13) & 0x3ffu));
}

// bfloat16 is a float32's top 16 bits: shift them back.
inline float bfloat16_bits_to_float(uint16_t b) { return half_detail::bits<float>(static_cast<uint32_t>(b) << 16); }

}  // namespace attnsim
