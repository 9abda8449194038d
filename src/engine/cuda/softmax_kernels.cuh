// scale + mask + softmax on the device: numbered kernels behind softmax_forward().
//
//   scores, scaled, masked, alpha are (B,h,Tq,Tk) row-major; mask (B,h,Tq,Tk) via strides.
//   scaled = scores * scale
//   masked = mask ? fill : scaled          (additive bug: scaled + float(mask))
//   alpha  = exp(masked - rowmax) / sum    (IEEE: a fully hidden row is -inf everywhere, so
//                                           rowmax = -inf, -inf - -inf = NaN: the row is NaN,
//                                           exactly as on the CPU and in PyTorch)
//
// The kernels only (no launchers): included by softmax.cu, and by the CPU emulation test
// (tests/test_cuda_kernels_emu.cpp) with tests/cuda_emu.h standing in for the CUDA runtime.
#pragma once

#ifdef __CUDACC__
#include <cuda_fp16.h>
#endif

#include <cmath>

#include "kernels.h"

namespace attnsim::cudak {
namespace {

// The value softmax reads at (b,h,i,j), writing the scaled and masked steps on the way.
__device__ __forceinline__ float scale_and_mask(const SoftmaxArgs& a, int64_t idx, int64_t b,
                                                int64_t h, int64_t i, int64_t j) {
  const float s = a.scores[idx] * a.scale;
  a.scaled[idx] = s;
  if (a.masked == nullptr) return s;
  float x = s;
  if (a.mask.any()) {
    if (a.additive)
      x = s + (mask_hidden(a.mask, b, h, i, j) ? 1.0f : 0.0f);
    else if (mask_hidden(a.mask, b, h, i, j))
      x = a.fill;
  }
  if (mask_hidden(a.mask2, b, h, i, j)) x = a.fill;
  a.masked[idx] = x;
  return x;
}

// ---------------------------------------------------------------------------------------
// v1: one thread per row, a literal port of the CPU loop. Handles both axes (a "row" along
// axis -2 is a column of the (Tq,Tk) matrix) and the fp16-without-max bug.
// pass 1: scale and mask, pass 2: max, pass 3: exp and sum, pass 4: divide.
__global__ void softmax_v1_kernel(SoftmaxArgs a) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool over_keys = a.axis == -1;
  const int64_t rows = a.B * a.H * (over_keys ? a.Tq : a.Tk);
  if (row >= rows) return;
  const int64_t len = over_keys ? a.Tk : a.Tq;
  const int64_t outer = row / (over_keys ? a.Tq : a.Tk);  // b*H + h
  const int64_t fixed = row % (over_keys ? a.Tq : a.Tk);  // i (axis -1) or j (axis -2)
  const int64_t b = outer / a.H, h = outer % a.H;
  const int64_t base = outer * a.Tq * a.Tk + (over_keys ? fixed * a.Tk : fixed);
  const int64_t step = over_keys ? 1 : a.Tk;
  const float* src = a.masked != nullptr ? a.masked : a.scaled;

  // pass 1: scaled and masked
  for (int64_t t = 0; t < len; ++t) {
    const int64_t i = over_keys ? fixed : t, j = over_keys ? t : fixed;
    scale_and_mask(a, base + t * step, b, h, i, j);
  }
  if (a.fp16_no_max) {
    // exp in half precision without subtracting the max: exp(x) > 65504 becomes inf, and
    // inf / inf is NaN — the bug the lesson shows.
    float sum = 0.0f;
    for (int64_t t = 0; t < len; ++t) {
      const float x = __half2float(__float2half(src[base + t * step]));
      const float e = __half2float(__float2half(expf(x)));
      a.alpha[base + t * step] = e;
      sum = __half2float(__float2half(sum + e));
    }
    for (int64_t t = 0; t < len; ++t)
      a.alpha[base + t * step] = __half2float(__float2half(a.alpha[base + t * step] / sum));
    return;
  }
  // pass 2: row max
  float mx = -INFINITY;
  for (int64_t t = 0; t < len; ++t) {
    const float x = src[base + t * step];
    if (x > mx) mx = x;
  }
  // pass 3: exp and sum
  float sum = 0.0f;
  for (int64_t t = 0; t < len; ++t) {
    const float e = expf(src[base + t * step] - mx);
    a.alpha[base + t * step] = e;
    sum += e;
  }
  // pass 4: divide
  for (int64_t t = 0; t < len; ++t) a.alpha[base + t * step] /= sum;
}

// ---------------------------------------------------------------------------------------
// v2: one warp per row (axis -1 only). Lanes stride the row so loads coalesce; the row max
// and the sum are reduced with __shfl_xor_sync instead of one thread walking the row.
constexpr int kWarpsPerBlock = 4;

__device__ __forceinline__ float warp_max(float x) {
  for (int o = 16; o > 0; o >>= 1) {
    const float y = __shfl_xor_sync(0xffffffffu, x, o);
    x = y > x ? y : x;
  }
  return x;
}

__device__ __forceinline__ float warp_sum(float x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

__global__ void softmax_v2_kernel(SoftmaxArgs a) {
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (row >= a.B * a.H * a.Tq) return;  // whole warps leave together
  const int64_t i = row % a.Tq, bh = row / a.Tq;
  const int64_t b = bh / a.H, h = bh % a.H;
  const int64_t base = row * a.Tk;

  // pass 1: scale, mask and the lane's max
  float mx = -INFINITY;
  for (int64_t j = lane; j < a.Tk; j += 32) {
    const float x = scale_and_mask(a, base + j, b, h, i, j);
    mx = x > mx ? x : mx;
  }
  mx = warp_max(mx);
  // pass 2: exp and sum (each lane re-reads what it wrote: no other lane touched it)
  const float* src = a.masked != nullptr ? a.masked : a.scaled;
  float sum = 0.0f;
  for (int64_t j = lane; j < a.Tk; j += 32) {
    const float e = expf(src[base + j] - mx);
    a.alpha[base + j] = e;
    sum += e;
  }
  sum = warp_sum(sum);
  // pass 3: divide
  for (int64_t j = lane; j < a.Tk; j += 32) a.alpha[base + j] /= sum;
}

}  // namespace
}  // namespace attnsim::cudak
