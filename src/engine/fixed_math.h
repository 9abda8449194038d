// exp, log and cos that give the same bits on every CPU and in WebAssembly.
//
// glibc picks its exp / log / cos / pow at load time by CPU (an FMA variant where the CPU
// has FMA), and libmvec's vector expf differs between its AVX2 and AVX-512 forms; each is
// accurate but their last bits differ, so a training run would not repeat bit for bit on
// another machine. These use IEEE +, -, *, / and floor only, in double, and the build turns
// off contraction into FMA (-ffp-contract=off), so the result depends on the input alone.
// Accurate to about 1 ulp of a double: far below float, which is what the callers keep.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>

namespace attnsim::fixed {

// 2^k as a double for k in [-1022, 1023] (built from its bits).
inline double pow2(int64_t k) {
  const uint64_t bits = static_cast<uint64_t>(k + 1023) << 52;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

inline double exp(double x) {
  if (!(x == x)) return x;  // NaN
  if (x > 709.7) return std::numeric_limits<double>::infinity();
  if (x < -745.2) return 0.0;
  // x = k·ln2 + r, |r| <= ln2/2; ln2_hi has its low bits zero, so k·ln2_hi is exact.
  constexpr double inv_ln2 = 1.4426950408889634, ln2_hi = 6.93147180369123816490e-01,
                   ln2_lo = 1.90821492927058770002e-10;
  const double kd = std::floor(x * inv_ln2 + 0.5);
  const double r = (x - kd * ln2_hi) - kd * ln2_lo;
  // Taylor to r^13: the next term is below 4e-18 for |r| <= 0.35.
  double p = 1.0 / 6227020800.0;  // 1/13!
  constexpr double inv_fact[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                                 1.0 / 40320.0,     1.0 / 5040.0,     1.0 / 720.0,     1.0 / 120.0,
                                 1.0 / 24.0,        1.0 / 6.0,        0.5,             1.0,
                                 1.0};
  for (double c : inv_fact) p = p * r + c;
  const int64_t k = static_cast<int64_t>(kd);
  if (k < -1022) return p * pow2(k + 1000) * pow2(-1000);  // a subnormal result
  if (k > 1023) return p * pow2(k - 1) * 2.0;
  return p * pow2(k);
}

inline double log(double x) {
  if (!(x > 0.0)) return x == 0.0 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (x == std::numeric_limits<double>::infinity()) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // x = m·2^e, m in [0.5, 1): exact
  if (m < 0.70710678118654752) {
    m *= 2.0;
    --e;
  }
  // log m = 2·atanh(s), s = (m-1)/(m+1), |s| <= 0.1716: the series in s² to s^23.
  const double s = (m - 1.0) / (m + 1.0), z = s * s;
  double p = 1.0 / 23.0;
  for (int n = 21; n >= 1; n -= 2) p = p * z + 1.0 / n;
  constexpr double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  return e * ln2_hi + (2.0 * s * p + e * ln2_lo);
}

// cos x for x in [0, 2π] (the learning-rate schedule's half turn, Box-Muller's full turn).
inline double cos(double x) {
  constexpr double pi = 3.141592653589793, two_pi = 6.283185307179586;
  if (x > pi) x = two_pi - x;  // cos is symmetric about π
  // Taylor in x² to x^32 on [0, π]: the next term is below 1e-18.
  const double z = x * x;
  double p = 0.0;
  for (int n = 32; n >= 2; n -= 2) p = (p * z) / (static_cast<double>(n) * (n - 1)) * -1.0 + 1.0;
  return p;
}

// [SECTION] float rows, eight lanes at a time

// Eight float lanes (GCC / clang vector type: AVX, two SSE or SIMD128 halves); the lanes are
// independent IEEE operations, so how the compiler splits them never changes a result.
typedef float F8 __attribute__((vector_size(32)));
typedef uint32_t U8 __attribute__((vector_size(32)));  // wraps: no undefined overflow
typedef float F8U __attribute__((vector_size(32), aligned(alignof(float)), may_alias));

// v = exp(v) per lane, within 2 ulp of float (Cephes' expf polynomial after x = k·ln2 + r).
// exp(-inf) = 0 and exp(NaN) = NaN as IEEE says; results below 2^-126 are flushed to 0.
// In place through a reference: a 32-byte vector by value has no fixed ABI without AVX.
inline void exp8(F8& v) {
  const F8 x = v;
  const F8 magic = F8{} + 12582912.0f;  // 1.5·2^23: t - magic rounds x·log2e to an integer
  const F8 t = x * 1.44269504088896341f + magic;
  const F8 kf = t - magic;
  F8 r = x - kf * 0.693359375f;  // ln 2 in two parts: k·0.693359375 is exact
  r = r - kf * -2.12194440e-4f;
  F8 p = F8{} + 1.9875691500e-4f;
  for (float c : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f})
    p = p * r + c;
  p = p * (r * r) + r + 1.0f;
  U8 k, m;  // k = bits(t) - bits(magic), as two's complement
  std::memcpy(&k, &t, sizeof k);
  std::memcpy(&m, &magic, sizeof m);
  const U8 bits = (k - m + 127u) << 23;  // 2^k for k in [-126, 127]
  F8 scale;
  std::memcpy(&scale, &bits, sizeof scale);
  F8 y = p * scale;
  y = x < -87.33f ? F8{} : y;
  y = x > 88.72f ? F8{} + std::numeric_limits<float>::infinity() : y;
  v = x != x ? x : y;
}

// y[j] = exp(x[j] - shift) for j < n; returns Σ y[j] summed in a fixed order: eight partial
// sums (j mod 8, each in j order), then ((s0+s1)+(s2+s3)) + ((s4+s5)+(s6+s7)).
inline float exp_shifted_sum(const float* x, float shift, float* y, int64_t n) {
  F8 acc{};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    F8 e = *reinterpret_cast<const F8U*>(x + j) - shift;
    exp8(e);
    *reinterpret_cast<F8U*>(y + j) = e;
    acc = acc + e;
  }
  if (j < n) {  // the tail as one padded vector: lanes past n hold exp(-inf) = 0
    float in[8], out[8];
    for (int l = 0; l < 8; ++l) in[l] = j + l < n ? x[j + l] - shift : -std::numeric_limits<float>::infinity();
    F8 e = *reinterpret_cast<const F8U*>(in);
    exp8(e);
    *reinterpret_cast<F8U*>(out) = e;
    for (int64_t l = 0; j + l < n; ++l) y[j + l] = out[l];
    acc = acc + e;
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace attnsim::fixed
