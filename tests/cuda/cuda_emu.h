// A tiny CUDA-on-CPU stand-in, just enough to run attnsim's own kernels (the .cuh files of
// src/engine/cuda) on a machine without a GPU: every thread of a block is a std::thread,
// __syncthreads is a std::barrier, a warp shuffle goes through a block-wide slot array
// between two barriers, and dynamic shared memory is one buffer per block, filled with NaN
// so that a kernel reading a cell it never wrote shows it. Blocks run one after another.
//
// What it checks: indexing, tiling, ragged edges, barriers, shuffles, masking and the
// online-softmax arithmetic of the real kernel source. What it does not: timing, memory
// coalescing, bank conflicts, register limits, or anything about the real hardware — those
// need the GPU run (tools/gpu-check.sh).
#pragma once

#define ATTNSIM_CUDA_EMU 1

#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct alignas(16) float4 {
  float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

struct __half {
  _Float16 v;
};
inline __half __float2half(float f) { return {static_cast<_Float16>(f)}; }
inline float __half2float(__half h) { return static_cast<float>(h.v); }

template <class T>
inline T min(T a, T b) {
  return b < a ? b : a;
}

namespace attnsim_emu {

struct Index3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local Index3 thread_idx, block_idx;
inline Index3 block_dim, grid_dim;
inline thread_local std::byte* block_smem = nullptr;
inline thread_local std::barrier<>* block_barrier = nullptr;
inline thread_local float* shuffle_slots = nullptr;

}  // namespace attnsim_emu

#define threadIdx ::attnsim_emu::thread_idx
#define blockIdx ::attnsim_emu::block_idx
#define blockDim ::attnsim_emu::block_dim
#define gridDim ::attnsim_emu::grid_dim
#define ATTNSIM_DYNAMIC_SMEM(type, name) \
  type* name = reinterpret_cast<type*>(::attnsim_emu::block_smem)

inline void __syncthreads() { attnsim_emu::block_barrier->arrive_and_wait(); }

// Every thread of the block must reach it (true of attnsim's kernels: whole warps leave
// early or none do, and a thread that has left no longer counts).
inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  const unsigned t = threadIdx.x;
  attnsim_emu::shuffle_slots[t] = v;
  __syncthreads();
  const float r = attnsim_emu::shuffle_slots[t ^ static_cast<unsigned>(lane_mask)];
  __syncthreads();
  return r;
}

namespace attnsim_emu {

// kernel<<<(gx, gy), threads, smem_bytes>>>(args...)
template <class Kernel, class... Args>
void launch(unsigned gx, unsigned gy, unsigned threads, size_t smem_bytes, Kernel kernel,
            const Args&... args) {
  block_dim = {threads, 1, 1};
  grid_dim = {gx, gy, 1};
  for (unsigned by = 0; by < gy; ++by)
    for (unsigned bx = 0; bx < gx; ++bx) {
      // exactly the bytes asked for (rounded to 16), so AddressSanitizer sees any overrun
      const size_t vec4 = (smem_bytes + 15) / 16;
      std::unique_ptr<float4[]> smem(vec4 ? new float4[vec4] : nullptr);
      float* f = reinterpret_cast<float*>(smem.get());
      for (size_t i = 0; i < vec4 * 4; ++i) f[i] = std::numeric_limits<float>::quiet_NaN();
      std::vector<float> slots(threads);
      std::barrier<> bar(static_cast<std::ptrdiff_t>(threads));
      std::vector<std::thread> pool;
      pool.reserve(threads);
      for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          thread_idx = {t, 0, 0};
          block_idx = {bx, by, 0};
          block_smem = reinterpret_cast<std::byte*>(smem.get());
          block_barrier = &bar;
          shuffle_slots = slots.data();
          kernel(args...);
          bar.arrive_and_drop();
        });
      for (auto& th : pool) th.join();
    }
}

}  // namespace attnsim_emu
