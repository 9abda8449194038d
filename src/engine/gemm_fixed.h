// A matrix product whose every bit is fixed by its inputs, for training runs that repeat bit
// for bit on any machine (a CI test retrains the shipped checkpoints and compares bytes).
//
// BLAS libraries split the k sum into blocks sized for the CPU and use FMA where the CPU has
// it, so OpenBLAS's Haswell and SkylakeX kernels (and Eigen in the page) round differently.
// Here each output is one sum in k order, from 0, every product rounded before it is added:
//   acc = 0; for k in 0..K-1: acc = acc + A(i,k)·B(k,j);  C = alpha·acc (+ beta·C)
// vectorised across output columns only, so the vector width (SSE, AVX, AVX-512, SIMD128)
// and the thread count change the speed, never the result.
#pragma once

#include <cstdint>

#include "gemm.h"
#include "parallel.h"

namespace attnsim {

// The same contract as sgemm (gemm.h).
void sgemm_fixed(Op a, Op b, int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// While one is alive on a thread, sgemm and the softmax's exp take their fixed-order forms
// there and in the engine's workers that thread starts (parallel.h's ThreadContext); other
// threads (the app's views beside live training) keep the fast ones. A training step holds one.
class FixedOrderProducts {
 public:
  FixedOrderProducts();
  ~FixedOrderProducts();
  FixedOrderProducts(const FixedOrderProducts&) = delete;
  FixedOrderProducts& operator=(const FixedOrderProducts&) = delete;
};

inline bool fixed_order_products() { return thread_context.fixed_order > 0; }

}  // namespace attnsim
