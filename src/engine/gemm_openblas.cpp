// sgemm through OpenBLAS's CBLAS interface (the desktop build). See gemm.h.
#include "gemm.h"
#include "gemm_fixed.h"

#include <cblas.h>

namespace attnsim {

void sgemm(Op a, Op b, int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda,
           const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (fixed_order_products()) return sgemm_fixed(a, b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  auto op = [](Op o) { return o == Op::T ? CblasTrans : CblasNoTrans; };
  // Debian's OpenBLAS takes int (blasint) sizes: the engine's predicted sizes keep every
  // dimension of one product far below 2^31.
  cblas_sgemm(CblasRowMajor, op(a), op(b), static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, A,
              static_cast<int>(lda), B, static_cast<int>(ldb), beta, C, static_cast<int>(ldc));
}

}  // namespace attnsim
