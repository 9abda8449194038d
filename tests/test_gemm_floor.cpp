// bench --floor times the pass's own matrix products: the same sgemm calls (shapes, leading
// dimensions, transposes) that the forward pass issued, and nothing else.
#include <catch2/catch.hpp>

#include "engine/gemm_floor.h"
#include "helpers.h"

using namespace attnsim;
using attnsim::test::sized_config;

namespace {

std::vector<GemmShape> calls_of_pass(const MhaConfig& c, const MhaWeights& w, const MhaInputs& in,
                                     ForwardResult& pass) {
  GemmLog log;
  pass = forward(c, w, in, cpu_backend());
  return log.calls;
}

}  // namespace

TEST_CASE("the GEMM floor issues exactly the sgemm calls of the pass", "[floor]") {
  struct Case {
    const char* what;
    MhaConfig config;
  };
  MhaConfig cross = sized_config(2, 6, 10, 32, 4, "causal");
  MhaConfig train = sized_config(3, 8, 8, 24, 3);
  train.train = true;
  train.dropout = 0.25f;
  MhaConfig no_wo = sized_config(2, 5, 5, 16, 2);
  no_wo.wo_identity = true;
  for (const Case& k : {Case{"self-attention", sized_config(2, 8, 8, 32, 4)}, Case{"cross, causal", cross},
                        Case{"train, dropout", train}, Case{"W_O = I", no_wo}}) {
    SECTION(k.what) {
      const MhaConfig& c = k.config;
      const MhaWeights w = init_weights(c.d_model, c.bias, c.seed);
      const MhaInputs in = random_inputs(c);
      ForwardResult pass;
      const std::vector<GemmShape> pass_calls = calls_of_pass(c, w, in, pass);
      GemmLog floor_log;
      run_forward_gemms(c, w, pass, cpu_backend());
      CHECK(floor_log.calls == pass_calls);

      // And they are the pass's products: projections over all B·T rows, one q·kᵀ and one
      // alpha·v per (batch, head), read in place through the (B,T,d) row stride.
      const int64_t B = c.batch, Tq = c.tq, Tk = c.tk, d = c.d_model, h = c.heads, dk = d / h;
      std::vector<GemmShape> want = {{B * Tq, d, d, d, d, d, true}, {B * Tk, d, d, d, d, d, true},
                                     {B * Tk, d, d, d, d, d, true}};
      for (int64_t i = 0; i < B * h; ++i) want.push_back({Tq, Tk, dk, d, d, Tk, true});
      for (int64_t i = 0; i < B * h; ++i) want.push_back({Tq, dk, Tk, Tk, d, dk, false});
      if (!c.wo_identity) want.push_back({B * Tq, d, d, d, d, d, true});
      CHECK(pass_calls == want);
      double flops = 0;
      for (const GemmShape& s : pass_calls) flops += 2.0 * s.m * s.n * s.k;
      CHECK(forward_gemm_flops(c) == flops);
    }
  }
}
