// exp over a row with glibc's libmvec: sixteen lanes at a time on AVX-512
// (_ZGVeN16v_expf), eight on AVX2 (_ZGVdN8v_expf); within 4 ulp, IEEE special cases kept:
// exp(-inf) = 0, exp(NaN) = NaN. The softmax spends most of its time here; a scalar expf per
// element was 3-4x slower, and the 16-lane form takes about 2/3 of the 8-lane time.
#pragma once

#include <cmath>
#include <cstdint>

#include "fixed_math.h"
#include "gemm_fixed.h"

#if defined(__AVX512F__)
#include <immintrin.h>
extern "C" __m512 _ZGVeN16v_expf(__m512 x);
#elif defined(__AVX2__)
#include <immintrin.h>
extern "C" __m256 _ZGVdN8v_expf(__m256 x);
#endif

namespace attnsim {

// The lanes exp_shifted_sum sums in: a row cut after a multiple of this many elements sums
// its kept elements exactly as the whole row does when the rest are exp(-inf) = 0.
#if defined(__AVX512F__)
inline constexpr int64_t kExpLanes = 16;
#elif defined(__AVX2__)
inline constexpr int64_t kExpLanes = 8;
#else
inline constexpr int64_t kExpLanes = 1;
#endif

// y[j] = exp(x[j] - shift) for j < n; returns the sum of the y[j]. Under FixedOrderProducts
// (a training step) fixed::exp_shifted_sum instead: the same bits on every CPU.
inline float exp_shifted_sum(const float* x, float shift, float* y, int64_t n) {
  if (fixed_order_products()) return fixed::exp_shifted_sum(x, shift, y, n);
  int64_t j = 0;
  float sum = 0.0f;
#if defined(__AVX512F__)
  const __m512 s = _mm512_set1_ps(shift);
  __m512 acc = _mm512_setzero_ps();
  for (; j + 16 <= n; j += 16) {
    const __m512 e = _ZGVeN16v_expf(_mm512_sub_ps(_mm512_loadu_ps(x + j), s));
    _mm512_storeu_ps(y + j, e);
    acc = _mm512_add_ps(acc, e);
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, acc);
  for (float v : lanes) sum += v;
#elif defined(__AVX2__)
  const __m256 s = _mm256_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  for (; j + 8 <= n; j += 8) {
    const __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(_mm256_loadu_ps(x + j), s));
    _mm256_storeu_ps(y + j, e);
    acc = _mm256_add_ps(acc, e);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  for (float v : lanes) sum += v;
#endif
  for (; j < n; ++j) {
    y[j] = std::exp(x[j] - shift);
    sum += y[j];
  }
  return sum;
}

// t[i] clamped to [-80, 80] when finite (NaN and ±inf pass unchanged), before an exp whose
// result only matters as x / (1 + e^t): e^80 = 5.5e34 and e^-80 = 1.8e-35 are as good as inf
// and 0 there (an output moves by at most |x|·1.8e-35). glibc's vector expf falls to scalar
// code for a whole vector when one lane is past its range (|t| > ~88): GELU's arguments reach
// that with large weights, and the clamp made that case 13x faster.
inline void clamp_exp_arguments(float* t, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = t[i];
    t[i] = v > 80.0f && v < INFINITY ? 80.0f : (v < -80.0f && v > -INFINITY ? -80.0f : v);
  }
}

}  // namespace attnsim
