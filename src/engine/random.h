// Deterministic counter-based randomness: value = f(seed, stream, index), so any element can
// be regenerated on its own (the reference path, the CUDA backend and tests get the same
// dropout mask and the same weights without sharing generator state).
#pragma once

#include <cmath>
#include <cstdint>

#include "fixed_math.h"

namespace attnsim {

// Streams keep weights, inputs and dropout independent for one seed.
enum class Stream : uint64_t { WQ = 1, WK, WV, WO, BQ, BK, BV, BO, Query, Key, Value, Dropout, Token, Embed, Position, Unembed };

inline uint64_t mix64(uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t random_bits(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix64(mix64(seed ^ mix64(stream)) ^ index);
}

// Uniform in [0, 1) with 24 random bits.
inline float random_uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<float>(random_bits(seed, stream, index) >> 40) * (1.0f / 16777216.0f);
}

// Standard normal (Box-Muller on two independent uniforms; fixed_math's log and cos, so a
// seed gives the same weights on every CPU).
inline float random_normal(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t bits = random_bits(seed, stream, index);
  const double u1 = (static_cast<double>(bits >> 40) + 1.0) / 16777217.0;  // (0, 1]
  const double u2 = static_cast<double>(bits & 0xFFFFFF) / 16777216.0;
  return static_cast<float>(std::sqrt(-2.0 * fixed::log(u1)) * fixed::cos(6.283185307179586 * u2));
}

// Dropout keeps an element of alpha when its uniform draw is >= p.
inline bool dropout_keeps(uint64_t seed, uint64_t index, float p) {
  return random_uniform(seed, static_cast<uint64_t>(Stream::Dropout), index) >= p;
}

}  // namespace attnsim
