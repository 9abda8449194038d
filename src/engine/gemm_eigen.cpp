// sgemm through Eigen 3.4 (the WebAssembly build). See gemm.h.
//
// Eigen has no WebAssembly packets of its own; built with -msimd128 -msse4.1, emscripten
// maps the SSE intrinsics of Eigen's SSE packets onto SIMD128, so its blocked GEBP kernel
// runs four lanes wide. Row-major maps with outer strides read the engine's views in place.
#include "gemm.h"
#include "gemm_fixed.h"

// The headers Eigen/Core reads, first and whole (see below).
#include <algorithm>
#include <array>
#include <cassert>
#include <cerrno>
#include <climits>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iosfwd>
#include <iostream>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <type_traits>
#include <emmintrin.h>
#include <pmmintrin.h>
#include <smmintrin.h>
#include <tmmintrin.h>
#include <xmmintrin.h>

// Eigen's GEBP kernel pins its packets to registers with empty x86 asm statements
// (__asm__("" : "+x,m" (a))): hints with no effect on the result, and constraints WebAssembly
// does not have. While Eigen itself is read they expand to nothing; the standard headers
// above were read without the macro.
#define __asm__(...)
#include <Eigen/Core>
#undef __asm__

namespace attnsim {

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Const = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
using Mutable = Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;

// op(X) (rows, cols) stored row-major with leading dimension ld.
template <class Fn>
void with_op(Op o, const float* X, int64_t rows, int64_t cols, int64_t ld, Fn&& fn) {
  if (o == Op::N)
    fn(Const(X, rows, cols, Eigen::OuterStride<>(ld)));
  else
    fn(Const(X, cols, rows, Eigen::OuterStride<>(ld)).transpose());
}

}  // namespace

void sgemm(Op a, Op b, int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda,
           const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (fixed_order_products()) return sgemm_fixed(a, b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  Mutable c(C, m, n, Eigen::OuterStride<>(ldc));
  if (k == 0) {  // no products: C = beta · C, and beta = 0 must not read C (it may hold NaN)
    if (beta == 0.0f) c.setZero();
    else c *= beta;
    return;
  }
  with_op(a, A, m, k, lda, [&](const auto& pa) {
    with_op(b, B, k, n, ldb, [&](const auto& pb) {
      if (beta == 0.0f) {
        c.noalias() = alpha * pa * pb;
      } else {
        if (beta != 1.0f) c *= beta;
        c.noalias() += alpha * pa * pb;
      }
    });
  });
}

}  // namespace attnsim
