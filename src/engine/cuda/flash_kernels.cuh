// Flash attention core on the device: numbered kernels behind flash_forward().
//
// Same math as the CPU's tiled path (FlashAttention-2 loop order): for each query block
// (one thread block), walk the key/value blocks; per row keep the running max m and the
// running sum l of exponentials; on each tile
//   s      = q·kᵀ * scale, hidden -> -inf            (Br, Bc)
//   m_new  = max(m, rowmax(s))
//   corr   = exp(m - m_new)                           (1 while the row is still all hidden)
//   p      = exp(s - m_new)                           (0 while the row is still all hidden)
//   l      = l * corr + rowsum(p);  o = o * corr + p·v
// and finally out = o / l. A fully hidden row ends with l = 0 and o = 0: 0/0 = NaN, the
// same NaN the standard path gives. The (Tq,Tk) score matrix is never written out; with
// tile_max / tile_sum set, each row's m and l after each key block are written for the
// app's flash panel; with tile_scores / tile_probs / tile_acc also the tile's S and P cells
// and the unnormalised accumulator after each key block.
// The kernels only (no launchers): included by flash.cu, and by the CPU emulation test
// (tests/test_cuda_kernels_emu.cpp) with tests/cuda_emu.h standing in for the CUDA runtime.
#pragma once

#include <cmath>

#include "kernels.h"

namespace attnsim::cudak {
namespace {

// ---------------------------------------------------------------------------------------
// v1: one thread per query row (block_q threads per block), K/V tiles of block_k keys staged
// in shared memory; q and the output row live in registers (DMAX >= dk). Any strides.
// pass 1: the tile's scores and their max, pass 2: rescale, exponentiate, accumulate.
template <int DMAX>
__global__ void flash_v1_kernel(FlashArgs a) {
  ATTNSIM_DYNAMIC_SMEM(float, smem);
  const int Bc = a.block_k;
  const int dk = static_cast<int>(a.dk);
  float* Ks = smem;                            // (Bc, dk)
  float* Vs = Ks + Bc * dk;                    // (Bc, dk)
  float* srow = Vs + Bc * dk + threadIdx.x * Bc;  // this thread's (Bc) scores
  const int64_t bh = blockIdx.y, b = bh / a.H, h = bh % a.H;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * a.block_q + threadIdx.x;
  const bool active = i < a.Tq;
  const float* kb_ = a.k + b * a.ks[0] + h * a.ks[1];
  const float* vb_ = a.v + b * a.vs[0] + h * a.vs[1];

  float q[DMAX], o[DMAX];
ATTNSIM_UNROLL
  for (int d = 0; d < DMAX; ++d) {
    q[d] = (active && d < dk) ? a.q[b * a.qs[0] + h * a.qs[1] + i * a.qs[2] + d * a.qs[3]] : 0.0f;
    o[d] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  const int64_t nkb = (a.Tk + Bc - 1) / Bc;
  const int64_t i_last = min(static_cast<int64_t>(blockIdx.x + 1) * a.block_q, a.Tq) - 1;
  // causal: key blocks that start after the block's last query row are wholly hidden
  const int64_t nkb_run = a.mask.causal ? min(nkb, i_last / Bc + 1) : nkb;
  for (int64_t kb = 0; kb < nkb_run; ++kb) {
    const int64_t j0 = kb * Bc;
    const int n = static_cast<int>(a.Tk - j0 < Bc ? a.Tk - j0 : Bc);
    __syncthreads();  // every thread is done with the previous tile
    for (int e = threadIdx.x; e < n * dk; e += blockDim.x) {
      const int c = e / dk, d = e % dk;
      Ks[e] = kb_[(j0 + c) * a.ks[2] + d * a.ks[3]];
      Vs[e] = vb_[(j0 + c) * a.vs[2] + d * a.vs[3]];
    }
    __syncthreads();
    if (!active) continue;
    // pass 1: scores of this tile and their max
    float mt = -INFINITY;
    for (int c = 0; c < n; ++c) {
      float s = 0.0f;
ATTNSIM_UNROLL
      for (int d = 0; d < DMAX; ++d)
        if (d < dk) s += q[d] * Ks[c * dk + d];
      s *= a.scale;
      if (mask_hidden(a.mask, b, h, i, j0 + c)) s = -INFINITY;
      srow[c] = s;
      mt = s > mt ? s : mt;
      if (a.tile_scores != nullptr) a.tile_scores[(bh * a.Tq + i) * a.Tk + j0 + c] = s;
    }
    // pass 2: new running max, rescale what was accumulated, add this tile
    const float m_new = mt > m ? mt : m;
    const float corr = m_new == -INFINITY ? 1.0f : expf(m - m_new);
    l *= corr;
ATTNSIM_UNROLL
    for (int d = 0; d < DMAX; ++d) o[d] *= corr;
    if (m_new != -INFINITY) {
      for (int c = 0; c < n; ++c) {
        const float p = expf(srow[c] - m_new);
        l += p;
        if (a.tile_probs != nullptr) a.tile_probs[(bh * a.Tq + i) * a.Tk + j0 + c] = p;
ATTNSIM_UNROLL
        for (int d = 0; d < DMAX; ++d)
          if (d < dk) o[d] += p * Vs[c * dk + d];
      }
    } else if (a.tile_probs != nullptr) {
      for (int c = 0; c < n; ++c) a.tile_probs[(bh * a.Tq + i) * a.Tk + j0 + c] = 0.0f;
    }
    m = m_new;
    if (a.tile_max != nullptr) {
      const int64_t t = (bh * a.Tq + i) * nkb + kb;
      a.tile_max[t] = m;
      a.tile_sum[t] = l;
    }
    if (a.tile_acc != nullptr) {
ATTNSIM_UNROLL
      for (int d = 0; d < DMAX; ++d)
        if (d < dk) a.tile_acc[((bh * a.Tq + i) * nkb + kb) * dk + d] = o[d];
    }
  }
  if (!active) return;
  for (int64_t kb = nkb_run; a.tile_max != nullptr && kb < nkb; ++kb) {  // skipped tiles
    a.tile_max[(bh * a.Tq + i) * nkb + kb] = m;
    a.tile_sum[(bh * a.Tq + i) * nkb + kb] = l;
  }
  if (a.row_max != nullptr) {
    a.row_max[bh * a.Tq + i] = m;
    a.row_sum[bh * a.Tq + i] = l;
  }
  float* orow = a.out + (bh * a.Tq + i) * a.dk;
ATTNSIM_UNROLL
  for (int d = 0; d < DMAX; ++d)
    if (d < dk) orow[d] = o[d] / l;
}

// ---------------------------------------------------------------------------------------
// v2: what changes from v1 — 64x64 tiles with 256 threads in a 16x16 grid; each thread owns
// a 4x4 register tile of the scores (rows ty*4.., keys tx*4..) and of the output (rows
// ty*4.., dims tx*4..); Q and K are staged transposed and V and P as rows in padded shared
// memory so every inner step is two float4 loads and 16 FMAs; row max and sum are reduced
// over the 16 lanes that share a row with shuffles. dk = 64.
constexpr int kBr = 64, kBc = 64, kD = 64, kPad = 68, kV2Threads = 256;
constexpr size_t kV2Smem = sizeof(float) * 4 * kD * kPad;  // Qt, Kt, Vs, Pt

__device__ __forceinline__ float row16_max(float x) {
  for (int o = 8; o > 0; o >>= 1) {
    const float y = __shfl_xor_sync(0xffffffffu, x, o);
    x = y > x ? y : x;
  }
  return x;
}

__device__ __forceinline__ float row16_sum(float x) {
  for (int o = 8; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

__device__ __forceinline__ void unpack(const float4 v, float (&x)[4]) {
  x[0] = v.x;
  x[1] = v.y;
  x[2] = v.z;
  x[3] = v.w;
}

// kRecord: write the tile figures (tile_* pointers); the fast path is compiled without them.
template <bool kRecord>
__global__ void __launch_bounds__(kV2Threads) flash_v2_kernel(FlashArgs a) {
  ATTNSIM_DYNAMIC_SMEM(float4, smem4);
  float* Qt = reinterpret_cast<float*>(smem4);  // (kD, kPad)  Qt[k][r] = q[r][k]
  float* Kt = Qt + kD * kPad;                   // (kD, kPad)  Kt[k][c] = k[c][k]
  float* Vs = Kt + kD * kPad;                   // (kBc, kPad) Vs[c][d] = v[c][d]
  float* Pt = Vs + kBc * kPad;                  // (kBc, kPad) Pt[c][r] = p[r][c]
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int64_t bh = blockIdx.y, b = bh / a.H, h = bh % a.H;
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kBr;
  const float* qb = a.q + b * a.qs[0] + h * a.qs[1];
  const float* kb_ = a.k + b * a.ks[0] + h * a.ks[1];
  const float* vb_ = a.v + b * a.vs[0] + h * a.vs[1];
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);

  // Q tile, transposed: rows past Tq are zeros (computed, never written)
ATTNSIM_UNROLL
  for (int it = 0; it < 4; ++it) {
    const int f = tid + it * kV2Threads, r = f % kBr, k4 = (f / kBr) * 4;
    const float4 x = i0 + r < a.Tq
                         ? *reinterpret_cast<const float4*>(qb + (i0 + r) * a.qs[2] + k4)
                         : zero;
    Qt[(k4 + 0) * kPad + r] = x.x;
    Qt[(k4 + 1) * kPad + r] = x.y;
    Qt[(k4 + 2) * kPad + r] = x.z;
    Qt[(k4 + 3) * kPad + r] = x.w;
  }
  float o[4][4], m[4], l[4];
ATTNSIM_UNROLL
  for (int e = 0; e < 4; ++e) {
    m[e] = -INFINITY;
    l[e] = 0.0f;
ATTNSIM_UNROLL
    for (int f = 0; f < 4; ++f) o[e][f] = 0.0f;
  }

  const int64_t nkb = (a.Tk + kBc - 1) / kBc;
  const int64_t i_last = min(i0 + kBr, a.Tq) - 1;
  // causal: key blocks that start after the block's last query row are wholly hidden
  const int64_t nkb_run = a.mask.causal ? min(nkb, i_last / kBc + 1) : nkb;
  for (int64_t kb = 0; kb < nkb_run; ++kb) {
    const int64_t j0 = kb * kBc;
    // K tile transposed, V tile as rows; keys past Tk are zeros (a NaN there would survive
    // p = 0 in p·v)
ATTNSIM_UNROLL
    for (int it = 0; it < 4; ++it) {
      const int f = tid + it * kV2Threads;
      const int c = f % kBc, k4 = (f / kBc) * 4;
      const float4 x = j0 + c < a.Tk
                           ? *reinterpret_cast<const float4*>(kb_ + (j0 + c) * a.ks[2] + k4)
                           : zero;
      Kt[(k4 + 0) * kPad + c] = x.x;
      Kt[(k4 + 1) * kPad + c] = x.y;
      Kt[(k4 + 2) * kPad + c] = x.z;
      Kt[(k4 + 3) * kPad + c] = x.w;
      const int c2 = f / 16, d4 = (f % 16) * 4;
      *reinterpret_cast<float4*>(&Vs[c2 * kPad + d4]) =
          j0 + c2 < a.Tk ? *reinterpret_cast<const float4*>(vb_ + (j0 + c2) * a.vs[2] + d4)
                         : zero;
    }
    __syncthreads();  // (also orders the Q tile on the first pass)

    // s = q·kᵀ for this thread's 4 rows x 4 keys
    float s[4][4];
ATTNSIM_UNROLL
    for (int e = 0; e < 4; ++e)
ATTNSIM_UNROLL
      for (int f = 0; f < 4; ++f) s[e][f] = 0.0f;
ATTNSIM_UNROLL_8
    for (int kk = 0; kk < kD; ++kk) {
      float qa[4], ka[4];
      unpack(*reinterpret_cast<const float4*>(&Qt[kk * kPad + ty * 4]), qa);
      unpack(*reinterpret_cast<const float4*>(&Kt[kk * kPad + tx * 4]), ka);
ATTNSIM_UNROLL
      for (int e = 0; e < 4; ++e)
ATTNSIM_UNROLL
        for (int f = 0; f < 4; ++f) s[e][f] = fmaf(qa[e], ka[f], s[e][f]);
    }

    // scale, mask, online softmax; p overwrites s
ATTNSIM_UNROLL
    for (int e = 0; e < 4; ++e) {
      const int64_t i = i0 + ty * 4 + e;
      float mt = -INFINITY;
ATTNSIM_UNROLL
      for (int f = 0; f < 4; ++f) {
        const int64_t j = j0 + tx * 4 + f;
        float x = s[e][f] * a.scale;
        if (j >= a.Tk || (i < a.Tq && mask_hidden(a.mask, b, h, i, j))) x = -INFINITY;
        s[e][f] = x;
        mt = x > mt ? x : mt;
        if (kRecord && a.tile_scores != nullptr && i < a.Tq && j < a.Tk)
          a.tile_scores[(bh * a.Tq + i) * a.Tk + j] = x;
      }
      mt = row16_max(mt);
      const float m_new = mt > m[e] ? mt : m[e];
      const float corr = m_new == -INFINITY ? 1.0f : expf(m[e] - m_new);
      float rs = 0.0f;
ATTNSIM_UNROLL
      for (int f = 0; f < 4; ++f) {
        const float p = m_new == -INFINITY ? 0.0f : expf(s[e][f] - m_new);
        s[e][f] = p;
        rs += p;
        const int64_t j = j0 + tx * 4 + f;
        if (kRecord && a.tile_probs != nullptr && i < a.Tq && j < a.Tk)
          a.tile_probs[(bh * a.Tq + i) * a.Tk + j] = p;
      }
      rs = row16_sum(rs);
      l[e] = l[e] * corr + rs;
ATTNSIM_UNROLL
      for (int f = 0; f < 4; ++f) o[e][f] *= corr;
      m[e] = m_new;
    }
ATTNSIM_UNROLL
    for (int f = 0; f < 4; ++f)
      *reinterpret_cast<float4*>(&Pt[(tx * 4 + f) * kPad + ty * 4]) =
          make_float4(s[0][f], s[1][f], s[2][f], s[3][f]);
    __syncthreads();

    // o += p·v for this thread's 4 rows x 4 dims
ATTNSIM_UNROLL_8
    for (int c = 0; c < kBc; ++c) {
      float pa[4], va[4];
      unpack(*reinterpret_cast<const float4*>(&Pt[c * kPad + ty * 4]), pa);
      unpack(*reinterpret_cast<const float4*>(&Vs[c * kPad + tx * 4]), va);
ATTNSIM_UNROLL
      for (int e = 0; e < 4; ++e)
ATTNSIM_UNROLL
        for (int f = 0; f < 4; ++f) o[e][f] = fmaf(pa[e], va[f], o[e][f]);
    }
    if (kRecord && a.tile_max != nullptr && tx == 0) {
ATTNSIM_UNROLL
      for (int e = 0; e < 4; ++e) {
        const int64_t i = i0 + ty * 4 + e;
        if (i < a.Tq) {
          a.tile_max[(bh * a.Tq + i) * nkb + kb] = m[e];
          a.tile_sum[(bh * a.Tq + i) * nkb + kb] = l[e];
        }
      }
    }
    if (kRecord && a.tile_acc != nullptr) {
ATTNSIM_UNROLL
      for (int e = 0; e < 4; ++e) {
        const int64_t i = i0 + ty * 4 + e;
        if (i < a.Tq)
          *reinterpret_cast<float4*>(a.tile_acc + ((bh * a.Tq + i) * nkb + kb) * kD + tx * 4) =
              make_float4(o[e][0], o[e][1], o[e][2], o[e][3]);
      }
    }
    __syncthreads();  // Kt, Vs and Pt are rewritten by the next tile
  }

  // out = o / l (0/0 = NaN for a fully hidden row)
ATTNSIM_UNROLL
  for (int e = 0; e < 4; ++e) {
    const int64_t i = i0 + ty * 4 + e;
    if (i < a.Tq && tx == 0) {
      for (int64_t kb = nkb_run; kRecord && a.tile_max != nullptr && kb < nkb; ++kb) {  // skipped tiles
        a.tile_max[(bh * a.Tq + i) * nkb + kb] = m[e];
        a.tile_sum[(bh * a.Tq + i) * nkb + kb] = l[e];
      }
      if (a.row_max != nullptr) {
        a.row_max[bh * a.Tq + i] = m[e];
        a.row_sum[bh * a.Tq + i] = l[e];
      }
    }
    if (i < a.Tq)
      *reinterpret_cast<float4*>(a.out + (bh * a.Tq + i) * kD + tx * 4) =
          make_float4(o[e][0] / l[e], o[e][1] / l[e], o[e][2] / l[e], o[e][3] / l[e]);
  }
}

}  // namespace
}  // namespace attnsim::cudak
