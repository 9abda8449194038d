// The one matrix product the engine issues, in CBLAS's row-major convention:
//   C (m,n) = alpha · op(A) (m,k) · op(B) (k,n) + beta · C,
// A, B, C addressed with leading dimensions (lda, ldb, ldc: elements between rows), so a
// head of a transposed view is read in place, with no copy. beta = 0 never reads C.
//
// Two implementations, chosen by the build: OpenBLAS (gemm_openblas.cpp, the desktop) and
// Eigen (gemm_eigen.cpp, WebAssembly, where its SSE packets compile to SIMD128). While a
// FixedOrderProducts guard is alive both hand the product to sgemm_fixed (gemm_fixed.h),
// whose bits do not depend on the machine.
#pragma once

#include <cstdint>

namespace attnsim {

enum class Op { N, T };  // op(X) = X or Xᵀ

void sgemm(Op a, Op b, int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda,
           const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace attnsim
