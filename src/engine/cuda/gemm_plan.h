// How the CUDA backend turns its matrix products into cuBLAS calls, as pure functions (no
// CUDA), so the mapping is tested on any machine (tests/test_cuda_kernels_emu.cpp runs the
// plans through a plain column-major GEMM).
//
// cuBLAS is column-major. A row-major (R,C) matrix with leading dimension ld is, read
// column-major, its transpose. So row-major C = op(A)·op(B) is column-major
// Cᵀ = op(B)ᵀ·op(A)ᵀ: the call takes our right operand first and our left operand second,
// swaps M and N, and keeps the op flags as they are.
//
//   linear   x (M,K) · Wᵀ (K,N): one call; x's leading dims merged into M when their strides
//            allow (a row stride ld >= K), W read transposed in place
//   qk       q (B,h,Tq,dk) · k (B,h,Tk,dk)ᵀ: one strided-batched call per b over the h heads;
//            a transposed view (strides (T·d, dk, d, 1)) is read in place with ld = d
//   av       alpha (B,h,Tq,Tk) · v (B,h,Tk,dk): the same, without the transpose of the right
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace attnsim::cudak {

// One cublasSgemmStridedBatched(transa, transb, m, n, k, 1, A + a_off, lda, stride_a,
// B + b_off, ldb, stride_b, 0, C + c_off, ldc, stride_c, batch) — where cuBLAS's A is our
// RIGHT operand and cuBLAS's B our LEFT operand (see above). Offsets and strides in elements.
struct GemmCall {
  bool transa = false, transb = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t a_off = 0, lda = 1, stride_a = 0;  // our right operand
  int64_t b_off = 0, ldb = 1, stride_b = 0;  // our left operand
  int64_t c_off = 0, ldc = 1, stride_c = 0;  // the row-major result
  int64_t batch = 1;
};

// A matrix operand read in place: its last two dims (rows, cols) with strides (rs, cs) are
// row-major with leading dimension ld (cs == 1), or stored transposed (rs == 1, ld = cs).
struct MatOperand {
  bool ok = false;
  bool trans = false;
  int64_t ld = 0;
};

inline MatOperand mat_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  const int64_t r1 = std::max<int64_t>(rows, 1), c1 = std::max<int64_t>(cols, 1);
  if (cols <= 1 || cs == 1) {  // row-major rows
    const int64_t ld = rows <= 1 ? c1 : rs;
    if (ld >= c1) return {true, false, ld};
  }
  if (rows <= 1 || rs == 1) {  // column-major: its transpose is row-major
    const int64_t ld = cols <= 1 ? r1 : cs;
    if (ld >= r1) return {true, true, ld};
  }
  return {};
}

// Row-major C (M,N) = op(L) (M,K) · op(R) (K,N), batched, mapped to the column-major call.
inline GemmCall rowmajor_gemm(bool trans_l, bool trans_r, int64_t M, int64_t N, int64_t K,
                              int64_t l_off, int64_t ldl, int64_t stride_l, int64_t r_off,
                              int64_t ldr, int64_t stride_r, int64_t c_off, int64_t ldc,
                              int64_t stride_c, int64_t batch) {
  GemmCall g;
  g.transa = trans_r;
  g.transb = trans_l;
  g.m = N;
  g.n = M;
  g.k = K;
  g.a_off = r_off;
  g.lda = ldr;
  g.stride_a = stride_r;
  g.b_off = l_off;
  g.ldb = ldl;
  g.stride_b = stride_l;
  g.c_off = c_off;
  g.ldc = ldc;
  g.stride_c = stride_c;
  g.batch = batch;
  return g;
}

// Batched product over (B,h): left (B,h,M,K) · right (B,h,K,N), or · right(B,h,N,K)ᵀ when
// trans_right. Shapes/strides are 4-D. Returns false when an operand cannot be read in place
// (the caller makes it row-major and plans again); else appends one call per b to `calls`.
// The result is row-major (B,h,M,N).
inline bool plan_bmm(const int64_t* ls, const int64_t* lst, const int64_t* rs, const int64_t* rst,
                     bool trans_right, std::vector<GemmCall>* calls) {
  const int64_t B = ls[0], H = ls[1], M = ls[2], K = ls[3];
  const int64_t N = trans_right ? rs[2] : rs[3];
  const MatOperand l = mat_operand(ls[2], ls[3], lst[2], lst[3]);
  const MatOperand r = mat_operand(rs[2], rs[3], rst[2], rst[3]);
  if (!l.ok || !r.ok) return false;
  for (int64_t b = 0; b < B; ++b)
    calls->push_back(rowmajor_gemm(l.trans, trans_right != r.trans, M, N, K, b * lst[0], l.ld,
                                   lst[1], b * rst[0], r.ld, rst[1], b * H * M * N, N, M * N,
                                   H));
  return true;
}

// linear: x (..., K) · Wᵀ with W (N,K) row-major. Returns false when x's leading dims do not
// merge into one row stride (the caller makes x row-major and plans again).
inline bool plan_linear(int64_t ndim, const int64_t* xs, const int64_t* xst, int64_t N,
                        GemmCall* call) {
  const int64_t K = xs[ndim - 1];
  int64_t M = 1;
  for (int64_t d = 0; d + 1 < ndim; ++d) M *= xs[d];
  if (ndim < 1 || (K > 1 && xst[ndim - 1] != 1)) return false;
  int64_t row_stride = std::max<int64_t>(K, 1), span = 0;  // span: rows of the dims seen
  for (int64_t d = ndim - 2; d >= 0; --d) {
    if (xs[d] == 1) continue;
    if (span == 0) {
      row_stride = xst[d];
      span = xs[d];
      if (row_stride < std::max<int64_t>(K, 1)) return false;
    } else {
      if (xst[d] != row_stride * span) return false;
      span *= xs[d];
    }
  }
  *call = rowmajor_gemm(false, true, M, N, K, 0, row_stride, 0, 0, std::max<int64_t>(K, 1), 0,
                        0, N, 0, 1);
  return true;
}

}  // namespace attnsim::cudak
