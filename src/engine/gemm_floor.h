// The GEMM floor of a forward pass: its own matrix products alone, on its own tensors, so
// `attnsim-cli bench --floor` can say how close the whole pass (every step kept) comes to
// the time the BLAS needs anyway.
//
// The CPU backend notes every sgemm it issues in the GemmLog active on the calling thread, so
// a test can check that the floor issues exactly the calls the pass issued (same shapes,
// same leading dimensions, same transposes).
#pragma once

#include <cstdint>
#include <vector>

#include "backend.h"
#include "mha.h"

namespace attnsim {

// One cblas_sgemm (row-major): C (m,n) = A (m,k) · op(B), leading dimensions as issued.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  bool trans_b = false;
  bool operator==(const GemmShape&) const = default;
};

// While one is alive, the CPU backend appends each sgemm it issues on this thread.
class GemmLog {
 public:
  GemmLog();
  ~GemmLog();
  GemmLog(const GemmLog&) = delete;
  GemmLog& operator=(const GemmLog&) = delete;
  std::vector<GemmShape> calls;
  static void note(const GemmShape& s);  // called by the backend; no-op with no log active
};

// The pass's matrix products again, on the tensors its trace holds: the four projections
// (x·Wᵀ + b), q·kᵀ and alpha·v (the alpha the pass used: alpha_dropped in train mode).
// Nothing else: no softmax side, no copy. The results are dropped.
void run_forward_gemms(const MhaConfig& c, const MhaWeights& w, const ForwardResult& pass, Backend& be);

// Multiply-adds x2 of those products.
double forward_gemm_flops(const MhaConfig& c);

}  // namespace attnsim
