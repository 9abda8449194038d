// The fixed-order product (gemm_fixed.h): op(B) in panels of NV vectors of columns (packed
// when transposed or ragged, else read in place), then a 6-row micro-kernel keeps a 6 × NV-vector tile of C in registers over the whole k
// sum. Row blocks are spread over the engine's threads; each output is one thread's one sum.
#include "gemm_fixed.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "parallel.h"

namespace attnsim {

namespace {

// The build's widest vector: 16 floats on AVX-512, 8 on AVX, 4 on SSE and SIMD128. GCC and
// clang vector types: + and * are lane-wise IEEE operations (no contraction: the build sets
// -ffp-contract=off), so the width never changes a lane's result.
#if defined(__AVX512F__)
constexpr int W = 16;
#elif defined(__AVX__)
constexpr int W = 8;
#else
constexpr int W = 4;
#endif
// Loads and stores through VecU: any alignment, and it may alias the floats it reads.
typedef float Vec __attribute__((vector_size(W * sizeof(float))));
typedef float VecU __attribute__((vector_size(W * sizeof(float)), aligned(alignof(float)), may_alias));

constexpr int MR = 6;  // rows per micro-kernel: 6 × 2 accumulators + 2 B vectors fit 16 registers

// Columns per panel: NV vectors. Two where that pads no more columns than one.
int vectors_per_panel(int64_t n) {
  const int64_t one = (n + W - 1) / W * W, two = (n + 2 * W - 1) / (2 * W) * (2 * W);
  return two == one ? 2 : 1;
}

// op(B)(k, j) for k < K, j < n into panels of NR = NV·W columns: panel p holds columns
// [p·NR, p·NR + NR) as K rows of NR floats, zeros past n.                   (panels, K, NR)
void pack_b(Op b, const float* B, int64_t ldb, int64_t K, int64_t n, int NR, std::vector<float>& out) {
  const int64_t panels = (n + NR - 1) / NR;
  out.resize(static_cast<size_t>(panels * K * NR));
  for (int64_t p = 0; p < panels; ++p) {
    float* dst = out.data() + p * K * NR;
    const int64_t j0 = p * NR, cols = std::min<int64_t>(NR, n - j0);
    if (b == Op::N) {
      for (int64_t k = 0; k < K; ++k) std::memcpy(dst + k * NR, B + k * ldb + j0, static_cast<size_t>(cols) * sizeof(float));
    } else {
      for (int64_t c = 0; c < cols; ++c) {
        const float* col = B + (j0 + c) * ldb;  // op(B)'s column j is row j of B
        for (int64_t k = 0; k < K; ++k) dst[k * NR + c] = col[k];
      }
    }
    if (cols < NR)
      for (int64_t k = 0; k < K; ++k) std::fill(dst + k * NR + cols, dst + (k + 1) * NR, 0.0f);
  }
}

// C's tile at rows a[0..MR) (row r's k-th element of op(A) at a[r][k·aks]; rows past m were
// clamped to m-1 by the caller and are not stored) and NV·W columns of op(B), whose row k
// starts at b + k·bs.
template <int NV>
void micro_kernel(const float* const a[MR], int64_t aks, const float* b, int64_t bs, int64_t K, int rows, int cols,
                  float alpha, float beta, float* C, int64_t ldc) {
  Vec acc[MR][NV] = {};
  for (int64_t k = 0; k < K; ++k) {
    Vec bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = *reinterpret_cast<const VecU*>(b + k * bs + v * W);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const float x = a[r][k * aks];
      for (int v = 0; v < NV; ++v) acc[r][v] = acc[r][v] + bv[v] * x;
    }
  }
  for (int r = 0; r < rows; ++r) {
    float* c = C + r * ldc;
    if (cols == NV * W) {  // a whole tile row: vector stores
      for (int v = 0; v < NV; ++v) {
        VecU& out = *reinterpret_cast<VecU*>(c + v * W);
        out = beta == 0.0f ? acc[r][v] * alpha : acc[r][v] * alpha + out * beta;
      }
      continue;
    }
    float out[NV * W];
    for (int v = 0; v < NV; ++v) *reinterpret_cast<VecU*>(out + v * W) = acc[r][v];
    if (beta == 0.0f)
      for (int j = 0; j < cols; ++j) c[j] = alpha * out[j];
    else
      for (int j = 0; j < cols; ++j) c[j] = alpha * out[j] + beta * c[j];
  }
}

// b, bs: op(B)'s row k of panel p at b + p·bp + k·bs (packed, or B itself read in place).
template <int NV>
void run(Op a, int64_t m, int64_t n, int64_t K, float alpha, const float* A, int64_t lda, const float* b, int64_t bp,
         int64_t bs, float beta, float* C, int64_t ldc) {
  constexpr int NR = NV * W;
  const int64_t panels = (n + NR - 1) / NR, blocks = (m + MR - 1) / MR;
  const int64_t ars = a == Op::N ? lda : 1, aks = a == Op::N ? 1 : lda;  // op(A)(i,k) = A[i·ars + k·aks]
  // Row blocks of about 2^18 multiply-adds per task, so a small product stays on one thread.
  const int64_t per_block = MR * n * K, grain = std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(per_block, 1));
  parallel_for(blocks, grain, [&](int64_t first, int64_t last) {
    for (int64_t blk = first; blk < last; ++blk) {
      const int64_t i0 = blk * MR;
      const int rows = static_cast<int>(std::min<int64_t>(MR, m - i0));
      const float* rows_a[MR];
      for (int r = 0; r < MR; ++r) rows_a[r] = A + std::min<int64_t>(i0 + r, m - 1) * ars;
      for (int64_t p = 0; p < panels; ++p) {
        const int cols = static_cast<int>(std::min<int64_t>(NR, n - p * NR));
        micro_kernel<NV>(rows_a, aks, b + p * bp, bs, K, rows, cols, alpha, beta, C + i0 * ldc + p * NR, ldc);
      }
    }
  });
}

}  // namespace

FixedOrderProducts::FixedOrderProducts() { ++thread_context.fixed_order; }
FixedOrderProducts::~FixedOrderProducts() { --thread_context.fixed_order; }

void sgemm_fixed(Op a, Op b, int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // no products: C = beta · C, and beta = 0 must not read C (it may hold NaN)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  const int nv = vectors_per_panel(n);
  const int64_t NR = nv * W;
  // op(B) = B with whole panels is read in place; otherwise packed (transposed, or padded)
  thread_local std::vector<float> packed;  // one product at a time per thread
  const bool in_place = b == Op::N && n % NR == 0;
  if (!in_place) pack_b(b, B, ldb, k, n, static_cast<int>(NR), packed);
  const float* pb = in_place ? B : packed.data();
  const int64_t panel_step = in_place ? NR : k * NR, row_step = in_place ? ldb : NR;
  if (nv == 2)
    run<2>(a, m, n, k, alpha, A, lda, pb, panel_step, row_step, beta, C, ldc);
  else
    run<1>(a, m, n, k, alpha, A, lda, pb, panel_step, row_step, beta, C, ldc);
}

}  // namespace attnsim
