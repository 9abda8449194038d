// CUDA kernels of the attention core, as numbered versions behind one dispatcher per op.
//
// This header is plain C++ (no engine headers, no CUDA headers): nvcc compiles the .cu files
// that implement it, the host compiler compiles cuda_backend.cpp that calls it. All device
// buffers are float32 or uint8 (bool mask, true = hidden); every index is int64.
//
//   softmax_forward   scores (B,h,Tq,Tk) -> scaled, masked, alpha        each (B,h,Tq,Tk)
//     v1  one thread per row: a literal port of the CPU loop (scale, fill, max, exp, sum, divide)
//     v2  one warp per row: lanes stride the row, max and sum reduced with warp shuffles
//   flash_forward     q (B,h,Tq,dk), k, v (B,h,Tk,dk) -> out (B,h,Tq,dk); no (Tq,Tk) buffer
//     v1  one thread per query row, K/V tiles of Bc keys staged in shared memory, any dk <= 128
//     v2  64x64 query/key tiles, 256 threads in a 16x16 grid each owning a 4x4 register tile,
//         Q, Kᵀ, V and P staged in shared memory, float4 loads; dk = 64 only
//   add_bias          y (M,N) += b (N)
//   strided_copy      dst (row-major) <- src (any strides): Tensor::contiguous on the device
#pragma once

#include <cstdint>
#include <initializer_list>

#ifdef __CUDACC__
#define ATTNSIM_HD __host__ __device__
#define ATTNSIM_DYNAMIC_SMEM(type, name) extern __shared__ type name[]
#define ATTNSIM_UNROLL _Pragma("unroll")
#define ATTNSIM_UNROLL_8 _Pragma("unroll 8")
#else  // the host compiler (and the CPU emulation test, tests/cuda/cuda_emu.h)
#define ATTNSIM_HD
#define ATTNSIM_UNROLL
#define ATTNSIM_UNROLL_8
#endif

namespace attnsim::cudak {

inline constexpr int kMaxDims = 8;

// Which cells of (B,h,Tq,Tk) are hidden, all parts ORed (the semantics of mask.h):
//   dense          element (b,h,i,j) is data[b*s[0]+h*s[1]+i*s[2]+j*s[3]] (broadcast dims
//                  have stride 0); data == nullptr means no dense part
//   causal         j > i
//   key padding    key_len[b] (device array): right: j >= len; left: j < Tk - len
//   query padding  query_len[b]: right: i >= len; left: i < Tq - len
// The structured parts cost O(B) memory, so the flash kernels never need a (Tq,Tk) mask.
struct MaskView {
  const uint8_t* data = nullptr;
  int64_t s[4] = {0, 0, 0, 0};
  bool causal = false;
  const int64_t* key_len = nullptr;
  const int64_t* query_len = nullptr;
  bool left = false;
  int64_t tq = 0, tk = 0;  // needed by left padding

  ATTNSIM_HD bool any() const {
    return data != nullptr || causal || key_len != nullptr || query_len != nullptr;
  }
};

#if defined(__CUDACC__) || defined(ATTNSIM_CUDA_EMU)
__device__ __forceinline__ bool mask_hidden(const MaskView& m, int64_t b, int64_t h, int64_t i,
                                            int64_t j) {
  if (m.data != nullptr && m.data[b * m.s[0] + h * m.s[1] + i * m.s[2] + j * m.s[3]] != 0)
    return true;
  if (m.causal && j > i) return true;
  if (m.key_len != nullptr && (m.left ? j < m.tk - m.key_len[b] : j >= m.key_len[b])) return true;
  if (m.query_len != nullptr && (m.left ? i < m.tq - m.query_len[b] : i >= m.query_len[b]))
    return true;
  return false;
}
#endif

// [SECTION] scale + mask + softmax
struct SoftmaxArgs {
  const float* scores = nullptr;  // (B,h,Tq,Tk) row-major
  float* scaled = nullptr;        // (B,h,Tq,Tk) scores * scale
  float* masked = nullptr;        // (B,h,Tq,Tk) filled / added; nullptr when there is no mask
  float* alpha = nullptr;         // (B,h,Tq,Tk) softmax of masked (or scaled) along `axis`
  int64_t B = 0, H = 0, Tq = 0, Tk = 0;
  float scale = 1.0f;
  MaskView mask;                  // fill where true (or add 1.0 when additive)
  MaskView mask2;                 // second masked_fill with the same fill (two-fills bug)
  float fill = 0.0f;
  bool additive = false;
  int axis = -1;                  // -1: over keys; -2: over queries (wrong-axis bug)
  bool fp16_no_max = false;       // exp without the max, rounded to half (fp16 bug)
};
// version 0 picks: v2 when axis == -1 and !fp16_no_max, else v1. Returns the version run.
// Throws std::runtime_error on a launch error.
int softmax_forward(const SoftmaxArgs& args, int version);

// [SECTION] flash attention core
struct FlashArgs {
  const float* q = nullptr;  int64_t qs[4] = {0, 0, 0, 1};  // (B,h,Tq,dk), strides in elements
  const float* k = nullptr;  int64_t ks[4] = {0, 0, 0, 1};  // (B,h,Tk,dk)
  const float* v = nullptr;  int64_t vs[4] = {0, 0, 0, 1};  // (B,h,Tk,dk)
  MaskView mask;
  float* out = nullptr;       // (B,h,Tq,dk) row-major
  float* tile_max = nullptr;  // (B,h,Tq,nkb) running max after each key block, or nullptr
  float* tile_sum = nullptr;  // (B,h,Tq,nkb) running sum after each key block, or nullptr
  float* tile_scores = nullptr;  // (B,h,Tq,Tk) S cells (scaled, -inf where hidden), or nullptr
  float* tile_probs = nullptr;   // (B,h,Tq,Tk) P cells = exp(S - m after the tile), or nullptr
  float* tile_acc = nullptr;     // (B,h,Tq,nkb,dk) accumulator after each key block, or nullptr
  // (tiles skipped by the causal rule leave their cells of these three unwritten)
  float* row_max = nullptr;   // (B,h,Tq) final running max, or nullptr
  float* row_sum = nullptr;   // (B,h,Tq) final running sum, or nullptr
  int64_t B = 0, H = 0, Tq = 0, Tk = 0, dk = 0;
  float scale = 1.0f;
  int block_q = 64;  // rows per thread block (v1: 1..128; v2: 64)
  int block_k = 64;  // keys per tile (v1: 1..128; v2: 64)
};
// True when v2 can run these arguments (dk == 64, 64x64 blocks, 16-byte aligned rows).
inline bool flash_v2_fits(const FlashArgs& a) {
  if (a.dk != 64 || a.block_q != 64 || a.block_k != 64) return false;
  if (a.qs[3] != 1 || a.ks[3] != 1 || a.vs[3] != 1) return false;
  for (int d = 0; d < 3; ++d)
    if (a.qs[d] % 4 != 0 || a.ks[d] % 4 != 0 || a.vs[d] % 4 != 0) return false;
  for (const void* p : {static_cast<const void*>(a.q), static_cast<const void*>(a.k),
                        static_cast<const void*>(a.v), static_cast<const void*>(a.out)})
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  return true;
}
// version 0 picks v2 when it fits, else v1. Returns the version run; throws
// std::runtime_error (with the reason) when no version can run the arguments.
int flash_forward(const FlashArgs& args, int version);

// [SECTION] small helpers
void add_bias(float* y, const float* bias, int64_t M, int64_t N);
// dst[i] = src[offset(i)] for the row-major index i of `shape` (ndim <= kMaxDims).
void strided_copy(float* dst, const float* src, int ndim, const int64_t* shape,
                  const int64_t* strides);

// NaN, -inf and +inf among the logical elements of a strided view (ndim <= kMaxDims), counted
// on the device; counts[0..2] (device memory, zeroed by the caller) receive them.
void count_nonfinite(const float* src, int ndim, const int64_t* shape, const int64_t* strides,
                     unsigned long long* counts);

// Throws std::runtime_error("CUDA error in <where>: ...") when a launch failed (no sync).
void check_last(const char* where);

}  // namespace attnsim::cudak
