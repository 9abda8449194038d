// Small device helpers: bias add, strided copy (the device's Tensor::contiguous), errors.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels.h"

namespace attnsim::cudak {

void check_last(const char* where) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in ") + where + ": " +
                             cudaGetErrorString(err));
}

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// y (M,N) += bias (N)
__global__ void add_bias_kernel(float* y, const float* bias, int64_t M, int64_t N) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx < M * N) y[idx] += bias[idx % N];
}

struct Layout {
  int ndim;
  int64_t shape[kMaxDims];
  int64_t strides[kMaxDims];
};

// dst[idx] = src[storage offset of the row-major index idx]         // copies
__global__ void strided_copy_kernel(float* dst, const float* src, Layout l, int64_t n) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n) return;
  int64_t rest = idx, off = 0;
  for (int d = l.ndim - 1; d >= 0; --d) {
    off += (rest % l.shape[d]) * l.strides[d];
    rest /= l.shape[d];
  }
  dst[idx] = src[off];
}

// NaN / -inf / +inf counts of a strided view: one atomic per thread that found any
__global__ void count_nonfinite_kernel(const float* src, Layout l, int64_t n,
                                       unsigned long long* counts) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n) return;
  int64_t rest = idx, off = 0;
  for (int d = l.ndim - 1; d >= 0; --d) {
    off += (rest % l.shape[d]) * l.strides[d];
    rest /= l.shape[d];
  }
  const float x = src[off];
  if (isnan(x)) atomicAdd(&counts[0], 1ull);
  else if (isinf(x)) atomicAdd(&counts[x < 0 ? 1 : 2], 1ull);
}

Layout layout_of(int ndim, const int64_t* shape, const int64_t* strides, int64_t* n) {
  if (ndim > kMaxDims) throw std::runtime_error("more than 8 dimensions");
  Layout l{};
  l.ndim = ndim;
  *n = 1;
  for (int d = 0; d < ndim; ++d) {
    l.shape[d] = shape[d];
    l.strides[d] = strides[d];
    *n *= shape[d];
  }
  return l;
}

}  // namespace

void count_nonfinite(const float* src, int ndim, const int64_t* shape, const int64_t* strides,
                     unsigned long long* counts) {
  int64_t n = 0;
  const Layout l = layout_of(ndim, shape, strides, &n);
  if (n == 0) return;
  count_nonfinite_kernel<<<blocks_for(n), kThreads>>>(src, l, n, counts);
  check_last("count_nonfinite");
}

void add_bias(float* y, const float* bias, int64_t M, int64_t N) {
  if (M * N == 0) return;
  add_bias_kernel<<<blocks_for(M * N), kThreads>>>(y, bias, M, N);
  check_last("add_bias");
}

void strided_copy(float* dst, const float* src, int ndim, const int64_t* shape,
                  const int64_t* strides) {
  int64_t n = 0;
  const Layout l = layout_of(ndim, shape, strides, &n);
  if (n == 0) return;
  strided_copy_kernel<<<blocks_for(n), kThreads>>>(dst, src, l, n);
  check_last("strided_copy");
}

}  // namespace attnsim::cudak
