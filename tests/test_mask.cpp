// Masks: the spec, the built mask, NaN rows and how they spread, the hidden-weight check,
// and each teaching bug doing exactly what it claims.
#include <catch2/catch.hpp>
#include <cmath>

#include "engine/error.h"
#include "engine/mha.h"
#include "helpers.h"

using namespace attnsim;

static Trace run(const std::string& mask, Bug bug = Bug::None, int64_t b = 2, int64_t t = 5) {
  MhaConfig c;
  c.batch = b;
  c.tq = c.tk = t;
  c.d_model = 8;
  c.heads = 2;
  c.mask = parse_mask_spec(mask);
  c.bug = bug;
  return forward(c, init_weights(8, true, 1), random_inputs(c)).trace;
}

TEST_CASE("the mask spec parses, prints back, and rejects unknown parts") {
  const MaskSpec s = parse_mask_spec("causal,key-padding=5:3,side=left");
  CHECK(s.causal);
  CHECK(s.key_lengths == std::vector<int64_t>{5, 3});
  CHECK(s.side == PadSide::Left);
  CHECK(format_mask_spec(s) == "causal,key-padding=5:3,side=left");
  CHECK(parse_mask_spec("none").empty());
  CHECK_THROWS_WITH(parse_mask_spec("causl"), Catch::Contains("unknown mask part 'causl'"));
  CHECK_THROWS_WITH(parse_mask_spec("key-padding=5:x"), Catch::Contains("'x' is not a length"));
  CHECK_THROWS_WITH(build_mask(parse_mask_spec("key-padding=5"), 2, 5, 5), Catch::Contains("has 1 lengths but the batch has 2"));
  CHECK_THROWS_WITH(build_mask(parse_mask_spec("key-padding=9:1"), 2, 5, 5), Catch::Contains("exceeds the sequence length 5"));
}

TEST_CASE("causal + key padding is one (B,1,Tq,Tk) mask, and hidden weights are exactly 0") {
  const Trace t = run("causal,key-padding=5:3");
  const Tensor& m = t.at("mask").out;
  CHECK(m.shape() == Dims{2, 1, 5, 5});
  CHECK(m.at({0, 0, 1, 2}) == 1);  // causal
  CHECK(m.at({1, 0, 4, 3}) == 1);  // key 3 is padding in batch 1
  CHECK(m.at({1, 0, 4, 2}) == 0);
  const Tensor& a = t.at("alpha").out;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 5; ++i) {
        float row = 0;
        for (int64_t j = 0; j < 5; ++j) {
          row += a.at({b, h, i, j});
          if (m.at({b, 0, i, j})) CHECK(a.at({b, h, i, j}) == 0.0f);
        }
        CHECK(row == Approx(1.0f));
      }
  CHECK(t.first_nan_step().empty());
}

TEST_CASE("left padding hides the first positions") {
  const Tensor m = build_mask(parse_mask_spec("key-padding=5:3,side=left"), 2, 5, 5);
  CHECK(m.at({1, 0, 0, 0}) == 1);
  CHECK(m.at({1, 0, 0, 1}) == 1);
  CHECK(m.at({1, 0, 0, 2}) == 0);
}

TEST_CASE("query padding hides whole rows: NaN appears in alpha and spreads to ctx and out") {
  const Trace t = run("query-padding=5:3");
  CHECK(t.first_nan_step() == "alpha");
  CHECK(t.at("scores_masked").nan_count == 0);
  CHECK(t.at("scores_masked").neginf_count == 2 * 2 * 5);  // 2 padded rows × 2 heads × 5 keys
  CHECK(t.at("alpha").nan_count == 2 * 2 * 5);
  CHECK(t.at("ctx_heads").nan_count == 2 * 2 * 4);          // 2 rows × 2 heads × dk 4
  CHECK(t.at("out").nan_count == 2 * 8);                    // 2 rows × d_model 8: W_O mixes heads
  CHECK(std::isnan(t.at("out").out.at({1, 4, 0})));
  CHECK_FALSE(std::isnan(t.at("out").out.at({1, 2, 0})));
}

TEST_CASE("bug: an inverted mask hides exactly the positions that should be seen") {
  const Trace good = run("causal"), bad = run("causal", Bug::MaskInverted);
  const Tensor& gm = good.at("mask").out;
  const Tensor& bm = bad.at("mask").out;
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 5; ++j) CHECK(bm.at({0, 0, i, j}) == 1 - gm.at({0, 0, i, j}));
  CHECK(bad.at("alpha").out.at({0, 0, 0, 0}) == 0.0f);  // query 0 may not see itself
  CHECK(bad.first_nan_step() == "alpha");               // the last query sees nothing: NaN
}

TEST_CASE("bug: two separate fills give the same weights as one OR-ed fill") {
  const Trace good = run("causal,key-padding=5:3"), bad = run("causal,key-padding=5:3", Bug::MaskTwoFills);
  CHECK(bad.at("scores_masked").op == "masked_fill ×2 (two-fills bug)");
  CHECK(test::max_abs_diff(good.at("alpha").out, bad.at("alpha").out) == 0);
}

TEST_CASE("bug: adding the bool mask as floats gives hidden positions more weight, not zero") {
  const Trace good = run("causal"), bad = run("causal", Bug::MaskAdditive);
  CHECK(good.at("alpha").out.at({0, 0, 0, 4}) == 0.0f);
  CHECK(bad.at("alpha").out.at({0, 0, 0, 4}) > 0.0f);
  CHECK(bad.at("scores_masked").out.at({0, 0, 0, 4}) == Approx(bad.at("scores_scaled").out.at({0, 0, 0, 4}) + 1));
}

TEST_CASE("bug: a finite fill turns fully hidden rows uniform instead of NaN") {
  const Trace bad = run("query-padding=5:3", Bug::MaskFiniteFill);
  CHECK(bad.first_nan_step().empty());
  for (int64_t j = 0; j < 5; ++j) CHECK(bad.at("alpha").out.at({1, 0, 4, j}) == Approx(0.2f));
}

TEST_CASE("bug: an inverted mask filled with -1e9 is silent: no NaN, the wrong cells still weighted") {
  const Trace loud = run("causal", Bug::MaskInverted), silent = run("causal", Bug::MaskInvertedFiniteFill);
  // Same inverted mask: the last query row hides every key. With -inf that row is NaN ...
  CHECK(std::isnan(loud.at("alpha").out.at({0, 0, 4, 0})));
  CHECK(silent.at("scores_masked").op == "masked_fill(-1e9)");
  // ... with -1e9 it is a uniform row instead, and nothing anywhere is NaN.
  CHECK(silent.first_nan_step().empty());
  for (int64_t j = 0; j < 5; ++j) CHECK(silent.at("alpha").out.at({0, 0, 4, j}) == Approx(0.2f));
  // Query 0 still sees only what it should not (keys 1..4) and not itself.
  CHECK(silent.at("alpha").out.at({0, 0, 0, 0}) == 0.0f);
  CHECK(parse_bug("mask-inverted-finite-fill") == Bug::MaskInvertedFiniteFill);
  CHECK(is_mask_bug(Bug::MaskInvertedFiniteFill));
}

TEST_CASE("bug: softmax over the wrong axis makes columns, not rows, sum to 1") {
  const Tensor a = run("none", Bug::SoftmaxWrongAxis).at("alpha").out;
  float col = 0, row = 0;
  for (int64_t i = 0; i < 5; ++i) col += a.at({0, 0, i, 2}), row += a.at({0, 0, 2, i});
  CHECK(col == Approx(1.0f));
  CHECK(row != Approx(1.0f));
}

TEST_CASE("bug: without 1/sqrt(dk) the rows are sharper (larger max weight)") {
  MhaConfig c;
  c.tq = c.tk = 8;
  c.d_model = 64;
  c.heads = 1;
  auto max_weight = [&](Bug bug) {
    c.bug = bug;
    const auto v = forward(c, init_weights(64, true, 0), random_inputs(c)).trace.at("alpha").out.to_vector();
    double total = 0;
    for (int64_t i = 0; i < 8; ++i) total += *std::max_element(v.begin() + i * 8, v.begin() + i * 8 + 8);
    return total / 8;
  };
  CHECK(max_weight(Bug::NoScale) > max_weight(Bug::None));
}

TEST_CASE("bug: half-precision softmax without the row max overflows to NaN on large logits") {
  MhaConfig c;
  c.tq = c.tk = 4;
  c.d_model = 4;
  c.heads = 1;
  c.bug = Bug::SoftmaxNoMaxFp16;
  MhaInputs in = random_inputs(c);
  for (int64_t i = 0; i < in.query.numel(); ++i) in.query.f32()[i] *= 40.0f;  // logits far above 11.1
  const Trace t = forward(c, init_weights(4, true, 0), in).trace;
  CHECK(t.at("scores_scaled").out.to_vector().size() == 16);
  CHECK(t.first_nan_step() == "alpha");
  c.bug = Bug::None;
  CHECK(forward(c, init_weights(4, true, 0), in).trace.first_nan_step().empty());  // max subtracted: fine
}

TEST_CASE("bug: view without contiguous stops at ctx_concat with the engine's real error") {
  const ForwardResult r = [] {
    MhaConfig c;
    c.bug = Bug::ViewWithoutContiguous;
    return forward(c, init_weights(c.d_model, true, 0), random_inputs(c));
  }();
  CHECK(r.error.find("view size is not compatible") != std::string::npos);
  CHECK(r.trace.at("ctx_transposed").out.defined());
  CHECK(r.trace.at("ctx_concat").skipped());
  CHECK(r.trace.at("ctx_concat").note == r.error);
  CHECK(r.trace.at("out").skipped());
  CHECK_THROWS_WITH(parse_bug("nope"), Catch::Contains("valid: none, mask-inverted"));
}
