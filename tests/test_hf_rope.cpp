// RoPE as a named step: the fast path against the plain loop of modeling_llama.py's
// formula, its place in the trace, and the decode path rotating K at its absolute position.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/decode.h"
#include "engine/mha.h"
#include "engine/reference.h"
#include "engine/rope.h"
#include "helpers.h"

using namespace attnsim;

namespace {

MhaConfig rope_config(int64_t T, int64_t kv_heads = 0) {
  MhaConfig c = test::sized_config(1, T, T, 16, 4, "causal");
  c.kv_heads = kv_heads;
  c.rope_theta = 10000;
  c.seed = 7;
  return c;
}

}  // namespace

TEST_CASE("rope's fast path equals the rotate_half loop on transposed views, at any start position") {
  const MhaConfig c = rope_config(9);
  const ForwardResult r = forward(c, init_weights(c.d_model, true, c.seed), random_inputs(c));
  const Tensor& q = r.trace.at("q_heads").out;  // (1,4,9,4), a transposed view
  REQUIRE_FALSE(q.is_contiguous());
  for (int64_t p0 : {0, 5, 3000}) {
    INFO("position0 " << p0);
    CHECK(test::max_abs_diff(rope_rotate(q, p0, 10000), reference::rope(q, p0, 10000)) < 1e-6);
  }
  // Llama 3's scaling changes the frequencies, the same way on both paths
  const RopeScaling llama3{8, 1, 4, 8};
  CHECK(test::max_abs_diff(rope_rotate(q, 7, 500000, llama3), reference::rope(q, 7, 500000, llama3)) < 1e-6);
  // pair 0 (wavelen 2π, between 8/4 and 8/1): the smooth band, s = (8/2π - 1)/3
  const double s = (8 / (2 * M_PI) - 1) / 3;
  CHECK(rope_inv_freq(0, 4, 500000, llama3) == Approx((1 - s) / 8 + s).epsilon(1e-6));
  // pair 1 (wavelen 2π·707 > 8): slowed by the factor
  CHECK(rope_inv_freq(1, 4, 500000, llama3) == Approx(rope_inv_freq(1, 4, 500000) / 8).epsilon(1e-6));
  // position 0 turns nothing: cos 0 = 1, sin 0 = 0
  CHECK(test::max_abs_diff(rope_rotate(q.narrow(2, 0, 1), 0, 10000), q.narrow(2, 0, 1).contiguous()) == 0);
}

TEST_CASE("a rotation keeps each pair's length and makes q·k depend on the distance only") {
  // pairs (i, i + dk/2): |x| is kept; q at p and k at p - 2 give the same score for any p
  Tensor x = Tensor::from_values({1, 1, 1, 4}, {0.3f, -1.2f, 0.8f, 0.5f});
  const Tensor y = rope_rotate(x, 17, 10000);
  for (int i = 0; i < 2; ++i)
    CHECK(std::hypot(y.f32()[i], y.f32()[i + 2]) == Approx(std::hypot(x.f32()[i], x.f32()[i + 2])).epsilon(1e-6));
  Tensor k = Tensor::from_values({1, 1, 1, 4}, {-0.4f, 0.9f, 0.1f, 0.7f});
  auto dot = [](const Tensor& a, const Tensor& b) {
    double s = 0;
    for (int i = 0; i < 4; ++i) s += a.f32()[i] * b.f32()[i];
    return s;
  };
  const double at5 = dot(rope_rotate(x, 5, 10000), rope_rotate(k, 3, 10000));
  const double at40 = dot(rope_rotate(x, 40, 10000), rope_rotate(k, 38, 10000));
  CHECK(at5 == Approx(at40).margin(1e-5));
  CHECK_THROWS_WITH(rope_rotate(Tensor::zeros({1, 1, 2, 3}), 0, 10000), Catch::Contains("even head dimension"));
}

TEST_CASE("with RoPE the trace lists q_rot and k_rot after the heads, and the scores read them") {
  const MhaConfig c = rope_config(6, 2);  // GQA: k_rot is (1,2,6,4)
  const ForwardResult r = forward(c, init_weights(c.d_model, true, c.seed, c.kv_dim()), random_inputs(c));
  const std::vector<std::string> names = trace_step_names(true, false);
  REQUIRE(r.trace.steps.size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) CHECK(r.trace.steps[i].name == names[i]);
  const Step& qr = r.trace.at("q_rot");
  CHECK(qr.kind == StepKind::Compute);
  CHECK(qr.out.shape() == Dims{1, 4, 6, 4});
  CHECK(r.trace.at("k_rot").out.shape() == Dims{1, 2, 6, 4});
  CHECK(r.trace.at("k_grouped").inputs == std::vector<std::string>{"k_rot"});
  CHECK(r.trace.at("scores").inputs == std::vector<std::string>{"q_rot", "k_grouped"});
  // the scores are q_rot · k_rotᵀ of the grouped heads
  const Tensor ref = reference::qk_grouped(qr.out, r.trace.at("k_grouped").out);
  CHECK(test::max_abs_diff(ref, r.trace.at("scores").out) < 1e-5);
}

TEST_CASE("decoding with RoPE token by token gives the full causal forward's outputs") {
  const int64_t T = 7;
  const MhaConfig c = rope_config(T, 2);
  const MhaWeights w = init_weights(c.d_model, true, c.seed, c.kv_dim());
  const MhaInputs in = random_inputs(c);
  const Tensor full = forward(c, w, in).trace.at("out").out;  // (1,T,d)
  KvCache cache(1, 2, c.head_dim(), T);
  const Trace prefill = attend_cached(c, w, cache, in.query.narrow(1, 0, 3).contiguous());  // positions 0..2
  CHECK(prefill.at("k_cache_append").inputs == std::vector<std::string>{"k_rot"});
  double worst = test::max_abs_diff(prefill.at("out").out, full.narrow(1, 0, 3).contiguous());
  for (int64_t t = 3; t < T; ++t) {
    const Trace step = attend_cached(c, w, cache, in.query.narrow(1, t, 1).contiguous());
    CHECK(step.at("q_rot").op.find("positions " + std::to_string(t) + ".." + std::to_string(t)) != std::string::npos);
    worst = std::max(worst, test::max_abs_diff(step.at("out").out, full.narrow(1, t, 1).contiguous()));
  }
  CHECK(worst < 1e-5);
}
