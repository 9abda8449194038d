// The CUDA backend: the same ops as the CPU backend (backend.h), computed on the GPU.
//
// Only exists in builds configured with CUDA (ATTNSIM_HAVE_CUDA); callers go through
// backend_by_name("cuda"), which checks for a device first.
//
// Memory: every tensor this backend returns is a host tensor (the trace lives on the host),
// and the backend keeps a device mirror of its storage for as long as the host storage
// lives, so the next op reads it on the device without a copy up. Views (q_heads, the
// transposed ctx) index the mirror with their own offset and strides: no copy for them
// either. Tensors made elsewhere (inputs, weights) are copied up for the op that reads them.
//
//   linear   cuBLAS sgemm (strided batched over B, W shared): y = x·Wᵀ, then + b
//   qk, av   cuBLAS sgemm strided batched over heads, one call per batch element; the
//            leading dimension of a transposed view (B,h,T,dk) with strides (T·d, dk, d, 1)
//            is d, so q_heads, k_heads, v_heads are read in place
//   scale_mask_softmax   kernels.h softmax v1 / v2 (dispatcher picks; set_softmax_version)
//   dropout  the keep mask is the CPU backend's (same seed, same cells dropped on both
//            backends); computed on the host and marked so in the note of the step
//   contiguous           strided-copy kernel
//   flash core           kernels.h flash v1 / v2 (cuda_flash_attention below)
#pragma once

#include <cstdint>
#include <string>

#include <vector>

#include "../backend.h"
#include "../flash.h"
#include "../mha.h"
#include "../trace.h"

namespace attnsim {

// True when the CUDA runtime sees at least one device; otherwise why_not says why.
bool cuda_device_present(std::string* why_not);

// The process-wide CUDA backend (created on first use). Throws Error without a device.
Backend& cuda_backend();

// Copy-back policy. On (the default), every op's output is copied to its host tensor before
// the op returns, so the trace can read it. Off, outputs stay on the device: the returned
// host tensor has its shape and storage but undefined contents until cuda_fetch(tensor)
// copies it down — so a caller copies only the steps it keeps (bench, or a forward pass
// that knows which steps the app shows).
void cuda_set_copy_back(bool on);
bool cuda_copy_back();
// Copies the device mirror of t's storage into the host storage (no-op without a mirror).
void cuda_fetch(const Tensor& t);

// Forces a softmax kernel version (0 = dispatcher's choice, 1, 2) — for tests and bench.
void cuda_set_softmax_version(int version);
int cuda_last_softmax_version();

// Flash attention core on the device, the API of flash_attention_core (flash.h):
//   q (B,h,Tq,dk), k and v (B,h,Tk,dk): any strides (transposed views are read in place)
//   mask: FlashMask (causal / padding evaluated per cell on the device, dense read through
//   its strides); causal tiles past the diagonal are skipped
//   result.out (B,h,Tq,dk), result.m / result.l (B,h,Tq) final running max and sum
//   options.block_q / block_k: 0 = 64x64 (kernel v2 when dk = 64, else v1); v1 takes 1..128
//   options.record_tiles: events as in flash.h, in the same order, every tensor written by
//   the kernel itself (S and P cells, the accumulator, running max and sum after each key
//   block; rescale and the "before" values derived from them on the host). Skipped tiles
//   (causal, past the diagonal) carry m/l before and after only. Traffic and byte figures
//   are left 0 (flash_forward fills them from the closed forms).
// version: 0 = dispatcher's choice, 1 or 2 forces a kernel (Error when it cannot run).
FlashCoreResult cuda_flash_attention_core(const Tensor& q, const Tensor& k, const Tensor& v,
                                          const FlashMask& mask, float scale,
                                          const FlashOptions& options = FlashOptions(),
                                          int version = 0);
int cuda_last_flash_version();

// forward() (mha.h) on the CUDA backend, copying to the host only the steps named in `keep`
// (e.g. {"out"}, or the steps a panel shows); a kept view brings its parent's storage with
// it. Every other computed step stays on the device: its Step keeps shape, strides, storage
// id and bytes, its NaN / -inf / +inf counts are counted on the device, its note says "on the
// device only", and its host tensor is NOT filled (read it only after cuda_fetch(step.out)).
// Inputs, the mask and dropout's output are host tensors anyway.
ForwardResult cuda_forward(const MhaConfig& config, const MhaWeights& weights,
                           const MhaInputs& inputs, const std::vector<std::string>& keep);

// Device-resident timing for attnsim-cuda-bench: runs fn() `reps` times after `warmup`
// runs and returns the median milliseconds measured with CUDA events.
double cuda_time_ms(void (*fn)(void*), void* ctx, int warmup, int reps);
void cuda_synchronize();

}  // namespace attnsim
