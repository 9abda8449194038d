// flash_forward against the engine's standard forward(): same weights, inputs and step
// names around the core; the output within the FlashAttention tests' 2x rule.
#include <catch2/catch.hpp>
#include <cmath>

#include "engine/flash.h"
#include "engine/npy.h"
#include "helpers.h"

using namespace attnsim;

namespace {

MhaConfig config(int64_t B, int64_t Tq, int64_t Tk, int64_t d, int64_t h, const std::string& mask) {
  MhaConfig c = test::sized_config(B, Tq, Tk, d, h, mask);
  c.seed = static_cast<uint64_t>(Tq * 131 + Tk);  // a different draw per shape
  return c;
}

}  // namespace

TEST_CASE("flash_forward: same named steps as forward(), score-sized ones skipped") {
  const MhaConfig c = config(2, 9, 9, 16, 4, "causal");
  const MhaWeights w = init_weights(c.d_model, c.bias, c.seed);
  const MhaInputs in = random_inputs(c);
  FlashOptions o;
  o.block_q = 4;
  o.block_k = 3;
  const FlashResult f = flash_forward(c, w, in, o);
  const ForwardResult s = forward(c, w, in);
  const std::vector<std::string> names = trace_step_names(false, false);
  REQUIRE(f.trace.steps.size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) REQUIRE(f.trace.steps[i].name == names[i]);
  for (const char* name : {"scores", "scores_scaled", "mask", "scores_masked", "alpha", "alpha_dropped"})
    CHECK(f.trace.at(name).skipped());
  // the projections are the same op on the same inputs: bit for bit equal
  for (const char* name : {"q_proj", "k_proj", "v_proj"})
    CHECK(f.trace.at(name).out.to_vector() == s.trace.at(name).out.to_vector());
  CHECK(f.trace.at("q_heads").out.strides() == s.trace.at("q_heads").out.strides());
  CHECK(f.trace.at("ctx_heads").out.shape() == Dims{2, 4, 9, 4});
  CHECK(f.trace.at("ctx_transposed").is_view());
  CHECK(f.trace.at("ctx_contiguous").kind == StepKind::Copy);
  CHECK(f.trace.at("ctx_concat").is_view());
  CHECK(f.trace.at("out").out.shape() == Dims{2, 9, 16});
  // the tiled trace holds no (B,h,Tq,Tk) tensor: less than the standard trace
  CHECK(f.trace.held_bytes() < s.trace.held_bytes());
}

TEST_CASE("flash_forward: equals the standard forward() within 2x the float32 error, self and cross, masks") {
  struct Run {
    int64_t B, Tq, Tk, d, h;
    std::string mask;
    int64_t bq, bk;
  };
  const std::vector<Run> runs = {
      {1, 16, 16, 32, 4, "none", 0, 0},           {2, 13, 13, 24, 3, "causal", 4, 5},
      {2, 7, 19, 16, 2, "key-padding=19:4", 3, 8}, {3, 21, 21, 32, 8, "causal,key-padding=21:10:3,side=left", 5, 5},
      {2, 11, 6, 12, 3, "query-padding=11:5", 2, 4}, {1, 130, 70, 64, 2, "causal", 64, 32},
      {4, 128, 128, 512, 8, "none", 0, 0},  // the article's T, d and h
  };
  for (const Run& r : runs) {
    const MhaConfig c = config(r.B, r.Tq, r.Tk, r.d, r.h, r.mask);
    const MhaWeights w = init_weights(c.d_model, c.bias, c.seed);
    const MhaInputs in = random_inputs(c);
    FlashOptions o;
    o.block_q = r.bq;
    o.block_k = r.bk;
    const FlashResult f = flash_forward(c, w, in, o);
    const FlashComparison cmp = compare_flash_with_standard(c, w, in, f);
    INFO("B=" << r.B << " Tq=" << r.Tq << " Tk=" << r.Tk << " d=" << r.d << " h=" << r.h << " mask " << r.mask
              << ": ctx max|flash-std| " << cmp.ctx_heads.max_abs_diff << " tol " << cmp.ctx_heads.tolerance
              << "; out " << cmp.out.max_abs_diff << " tol " << cmp.out.tolerance);
    CHECK(cmp.ctx_heads.ok());
    CHECK(cmp.out.ok());
    CHECK(cmp.ctx_heads.max_abs_diff > 0);  // a real comparison, not two copies of one array
    CHECK(cmp.ctx_heads.std_error > 0);
  }
}

TEST_CASE("flash_forward: a padded query row is NaN in both paths, at the same places") {
  const MhaConfig c = config(2, 6, 6, 8, 2, "query-padding=6:3");
  const MhaWeights w = init_weights(c.d_model, c.bias, c.seed);
  const MhaInputs in = random_inputs(c);
  const FlashResult f = flash_forward(c, w, in);
  const ForwardResult s = forward(c, w, in);
  CHECK(f.trace.at("out").nan_count == 3 * 8);  // batch 1, rows 3..5, all of d_model
  CHECK(f.trace.at("out").nan_count == s.trace.at("out").nan_count);
  CHECK(compare_flash_with_standard(c, w, in, f).out.nan_mismatches == 0);
}

TEST_CASE("flash_forward: a mask file is ORed with the mask spec, as in forward()") {
  MhaConfig c = config(1, 8, 8, 8, 2, "causal");
  const MhaWeights w = init_weights(c.d_model, c.bias, c.seed);
  MhaInputs in = random_inputs(c);
  in.mask_file = Tensor::zeros({8}, DType::Bool);  // (Tk,) broadcast: hide key 0 for every row
  in.mask_file.b8()[0] = 1;
  const FlashResult f = flash_forward(c, w, in, FlashOptions{2, 2});
  const FlashComparison cmp = compare_flash_with_standard(c, w, in, f);
  CHECK(cmp.out.nan_count == 8);  // row 0 sees only key 0 under causal: fully hidden
  CHECK(cmp.out.ok());
}

TEST_CASE("flash_forward: refuses what the tiled path does not model, and sizes over the limit") {
  MhaConfig c = config(1, 8, 8, 8, 2, "causal");
  const MhaWeights w = init_weights(c.d_model, c.bias, c.seed);
  const MhaInputs in = random_inputs(c);
  MhaConfig bug = c;
  bug.bug = Bug::MaskFiniteFill;
  CHECK_THROWS_WITH(flash_forward(bug, w, in), Catch::Contains("correct math only"));
  MhaConfig drop = c;
  drop.train = true;
  drop.dropout = 0.1f;
  CHECK_THROWS_WITH(flash_forward(drop, w, in), Catch::Contains("eval mode only"));
  MhaConfig small = c;
  small.mem_limit = 1000;
  CHECK_THROWS_WITH(flash_forward(small, w, in), Catch::Contains("over the limit"));
  // no-scale is the same math with scale 1: still equal to the standard path
  MhaConfig noscale = c;
  noscale.bug = Bug::NoScale;
  const FlashResult f = flash_forward(noscale, w, in, FlashOptions{3, 3});
  CHECK(compare_flash_with_standard(noscale, w, in, f).out.ok());
}

TEST_CASE("flash_forward: at T=16384 the tiled path predicts a few hundred MiB where the trace predicts GiBs") {
  MhaConfig c = config(1, 16384, 16384, 512, 8, "none");
  const int64_t tiled = predict_flash_bytes(c, FlashOptions());
  const int64_t standard = predict_trace_bytes(c);
  CHECK(tiled < (1LL << 30));
  CHECK(standard > 16 * (1LL << 30));  // two or more (8, 16384, 16384) float tensors
}

TEST_CASE("flash_core_for_trace: replaying the core on a standard trace gives the flash_forward result, rows converge") {
  const MhaConfig c = config(1, 10, 10, 8, 2, "causal");
  const MhaWeights w = init_weights(c.d_model, c.bias, c.seed);
  const MhaInputs in = random_inputs(c);
  const ForwardResult s = forward(c, w, in);
  FlashOptions o;
  o.block_q = 4;
  o.block_k = 3;
  o.record_tiles = true;
  const FlashCoreResult replay = flash_core_for_trace(c, in, s.trace, o);
  const FlashResult f = flash_forward(c, w, in, o);
  REQUIRE(replay.out.to_vector() == f.trace.at("ctx_heads").out.to_vector());
  // the partial output after the last visited tile of a block is the block's final output
  const FlashEvent* last_tile = nullptr;
  int64_t finals = 0;
  for (const FlashEvent& e : replay.events) {
    if (e.kind == FlashEventKind::Tile) last_tile = &e;
    if (e.kind != FlashEventKind::Final) continue;
    REQUIRE(last_tile != nullptr);
    REQUIRE(flash_partial_output(*last_tile).to_vector() == flash_partial_output(e).to_vector());
    ++finals;
  }
  CHECK(finals == 2 * 3);
  REQUIRE(replay.events[2].kind == FlashEventKind::Skipped);  // rows 0..3 never see keys 6..8
  CHECK_FALSE(flash_partial_output(replay.events[2]).defined());
}
