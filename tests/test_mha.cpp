// The forward pass: step order and layout, every fast step against its plain-loop
// reference, dropout, W_O = I, and the memory refusal.
#include <catch2/catch.hpp>
#include <cmath>

#include "engine/error.h"
#include "engine/mha.h"
#include "engine/reference.h"
#include "helpers.h"

using namespace attnsim;
using test::max_abs_diff;

static ForwardResult run(const MhaConfig& c) {
  return forward(c, init_weights(c.d_model, c.bias, c.seed), random_inputs(c));
}

static MhaConfig small(int64_t b = 2, int64_t tq = 5, int64_t tk = 5, int64_t d = 12, int64_t h = 3) {
  return test::sized_config(b, tq, tk, d, h);
}

TEST_CASE("the trace lists every step of DESIGN.md in order, skipped ones included") {
  const ForwardResult r = run(small());
  const std::vector<std::string> names = trace_step_names(false, false);  // g == h, no cache
  REQUIRE(names.size() == 25);  // DESIGN.md's 23 and q_rot, k_rot
  REQUIRE(r.trace.steps.size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) CHECK(r.trace.steps[i].name == names[i]);
  CHECK(r.trace.at("q_rot").skipped());  // no RoPE in this config
  CHECK(r.trace.at("k_rot").skipped());
  CHECK(r.trace.at("mask").skipped());
  CHECK(r.trace.at("alpha_dropped").skipped());
  CHECK(r.trace.at("alpha_dropped").note == "eval mode: dropout is the identity");
}

TEST_CASE("the article's shapes at B=32, T=128, d=512, h=8, and where memory is shared") {
  MhaConfig c = small(32, 128, 128, 512, 8);
  const ForwardResult r = run(c);
  const Trace& t = r.trace;
  CHECK(t.at("q_proj").out.shape() == Dims{32, 128, 512});
  CHECK(t.at("q_view").out.shape() == Dims{32, 128, 8, 64});
  CHECK(t.at("q_heads").out.shape() == Dims{32, 8, 128, 64});
  CHECK(t.at("q_heads").out.strides() == Dims{65536, 64, 512, 1});
  CHECK(t.at("scores").out.shape() == Dims{32, 8, 128, 128});
  CHECK(t.at("ctx_transposed").out.shape() == Dims{32, 128, 8, 64});
  CHECK_FALSE(t.at("ctx_transposed").out.is_contiguous());
  CHECK(t.at("out").out.shape() == Dims{32, 128, 512});
  // views share their parent's storage and cost nothing; the one copy is ctx_contiguous
  CHECK(t.at("q_view").storage_id == t.at("q_proj").storage_id);
  CHECK(t.at("q_heads").storage_id == t.at("q_proj").storage_id);
  CHECK(t.at("ctx_concat").storage_id == t.at("ctx_contiguous").storage_id);
  CHECK(t.at("q_heads").new_bytes == 0);
  int copies = 0;
  for (const Step& s : t.steps) copies += s.kind == StepKind::Copy;
  CHECK(copies == 1);
  CHECK(t.at("ctx_contiguous").copied_bytes == 32 * 128 * 512 * 4);
  // held = 1 input + 3 projections + 3 score-sized + ctx_heads + ctx_contiguous + out
  const int64_t act = 32 * 128 * 512 * 4, score = 32 * 8 * 128 * 128 * 4;
  CHECK(t.held_bytes() == 7 * act + 3 * score);
  CHECK(t.held_bytes() == predict_trace_bytes(c));
}

TEST_CASE("every fast step equals its plain-loop reference") {
  for (const MhaConfig& c : {small(), small(3, 4, 7, 16, 4), small(1, 9, 9, 10, 5)}) {
    MhaConfig m = c;
    m.mask = parse_mask_spec(c.self_attention ? "causal,key-padding=" + std::string(c.batch == 1 ? "7" : "5:3") : "key-padding=7:4:6");
    const MhaWeights w = init_weights(m.d_model, true, 3);
    const MhaInputs in = random_inputs(m);
    const Trace t = forward(m, w, in).trace;
    INFO("B=" << m.batch << " Tq=" << m.tq << " Tk=" << m.tk << " d=" << m.d_model << " h=" << m.heads);
    CHECK(max_abs_diff(t.at("q_proj").out, reference::linear(in.query, w.W_Q.weight, w.W_Q.bias)) < 1e-5);
    CHECK(max_abs_diff(t.at("k_proj").out, reference::linear(in.key, w.W_K.weight, w.W_K.bias)) < 1e-5);
    CHECK(max_abs_diff(t.at("scores").out, reference::qk(t.at("q_heads").out, t.at("k_heads").out)) < 1e-5);
    SoftmaxSpec spec;
    spec.scale = 1.0f / std::sqrt(static_cast<float>(m.head_dim()));
    spec.mask = t.at("mask").out.expand(t.at("scores").out.shape());
    const SoftmaxSteps ref = reference::scale_mask_softmax(t.at("scores").out, spec);
    CHECK(max_abs_diff(t.at("scores_scaled").out, ref.scaled) == 0);
    CHECK(max_abs_diff(t.at("scores_masked").out, ref.masked) == 0);
    CHECK(max_abs_diff(t.at("alpha").out, ref.alpha) < 1e-6);
    CHECK(max_abs_diff(t.at("ctx_heads").out, reference::av(t.at("alpha").out, t.at("v_heads").out)) < 1e-5);
    CHECK(max_abs_diff(t.at("ctx_contiguous").out, t.at("ctx_transposed").out) == 0);
    CHECK(max_abs_diff(t.at("out").out, reference::linear(t.at("ctx_concat").out, w.W_O.weight, w.W_O.bias)) < 1e-5);
  }
}

TEST_CASE("cross-attention gives non-square scores") {
  const Trace t = run(small(2, 3, 7, 8, 2)).trace;
  CHECK(t.at("scores").out.shape() == Dims{2, 2, 3, 7});
  CHECK(t.at("out").out.shape() == Dims{2, 3, 8});
  CHECK(t.at("query").storage_id != t.at("key").storage_id);
}

TEST_CASE("dropout: seeded in train mode, scaled by 1/(1-p), identical to the reference") {
  MhaConfig c = small(2, 16, 16, 8, 2);
  c.train = true;
  c.dropout = 0.5f;
  c.seed = 7;
  const Trace t = run(c).trace;
  const Step& d = t.at("alpha_dropped");
  REQUIRE_FALSE(d.skipped());
  CHECK(t.at("ctx_heads").inputs[0] == "alpha_dropped");
  CHECK(max_abs_diff(d.out, reference::dropout(t.at("alpha").out, 0.5f, 7)) == 0);
  const auto a = t.at("alpha").out.to_vector(), v = d.out.to_vector();
  int zeros = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == 0) ++zeros;
    else CHECK(v[i] == Approx(2 * a[i]));
  }
  CHECK(zeros > 0.4 * v.size());
  CHECK(zeros < 0.6 * v.size());
  CHECK(max_abs_diff(run(c).trace.at("alpha_dropped").out, d.out) == 0);  // same seed, same mask
}

TEST_CASE("W_O = identity makes out the concatenated context itself") {
  MhaConfig c = small();
  c.wo_identity = true;
  const Trace t = run(c).trace;
  CHECK(t.at("out").is_view());
  CHECK(t.at("out").out.shares_storage_with(t.at("ctx_concat").out));
  CHECK(t.at("out").op == "identity (W_O = I)");
}

TEST_CASE("a config whose trace would not fit is refused before allocating, with numbers") {
  MhaConfig c = small(1, 16384, 16384, 512, 8);
  const int64_t need = predict_trace_bytes(c);
  CHECK(need > 3 * int64_t{8} * 16384 * 16384 * 4);  // scores, scores_scaled, alpha: (1,8,T,T) float each
  c.mem_limit = int64_t{1} << 30;
  CHECK_THROWS_WITH(run(c), Catch::Contains("needs 24.22 GiB") && Catch::Contains("over the limit of 1.00 GiB") &&
                                Catch::Contains("score tensor alone is 8.00 GiB"));
}

TEST_CASE("bad configs are errors that name the numbers") {
  MhaConfig c = small(1, 4, 4, 10, 4);
  CHECK_THROWS_WITH(run(c), Catch::Contains("d_model 10 is not divisible by heads 4"));
  c = small(0, 4, 4, 8, 2);
  CHECK_THROWS_WITH(run(c), Catch::Contains("batch must be positive, got 0"));
  c = small(1, 4, 4, 8, 2);
  c.tk = 5;
  CHECK_THROWS_WITH(run(c), Catch::Contains("must equal tk"));
  c = small(1, 4, 4, 8, 2);
  MhaInputs in = random_inputs(c);
  in.query = Tensor::zeros({1, 3, 8});
  CHECK_THROWS_WITH(forward(c, init_weights(8, true, 0), in), Catch::Contains("has shape (1, 3, 8) but the config needs (1, 4, 8)"));
}

// Every step of a and b alike: name, kind, layout, storage numbering, bytes, counts, values.
static void check_same_trace(const Trace& a, const Trace& b) {
  REQUIRE(a.steps.size() == b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const Step &x = a.steps[i], &y = b.steps[i];
    INFO(x.name);
    CHECK(x.name == y.name);
    CHECK(x.kind == y.kind);
    CHECK(x.storage_id == y.storage_id);
    CHECK(x.new_bytes == y.new_bytes);
    CHECK(x.nan_count == y.nan_count);
    CHECK(x.neginf_count == y.neginf_count);
    CHECK(x.posinf_count == y.posinf_count);
    CHECK(x.note == y.note);
    REQUIRE(x.out.defined() == y.out.defined());
    if (!x.out.defined()) continue;
    CHECK(x.out.shape() == y.out.shape());
    CHECK(x.out.strides() == y.out.strides());
    CHECK(x.out.offset() == y.out.offset());
    if (x.out.dtype() == DType::F32) CHECK(max_abs_diff(x.out, y.out) == 0.0);  // NaN where the other has NaN
  }
  CHECK(a.held_bytes() == b.held_bytes());
}

TEST_CASE("a mask or bug edit takes the earlier pass's projections, and the trace is the same as computed") {
  const MhaConfig c = small(2, 6, 6, 12, 3);
  const MhaWeights w = init_weights(c.d_model, c.bias, c.seed);
  const MhaInputs in = random_inputs(c);
  const ForwardResult first = forward(c, w, in);
  CHECK_FALSE(first.trace.reused_head_steps);
  for (const Bug bug : {Bug::None, Bug::NoScale, Bug::MaskInverted, Bug::SoftmaxNoMaxFp16}) {
    MhaConfig edited = c;
    edited.mask.causal = true;
    edited.mask.key_lengths = {6, 3};
    edited.bug = bug;
    const ForwardResult reused = forward(edited, w, in, cpu_backend(), &first.trace);
    CHECK(reused.trace.reused_head_steps);
    CHECK(reused.trace.at("q_proj").out.shares_storage_with(first.trace.at("q_proj").out));
    check_same_trace(reused.trace, forward(edited, w, in).trace);  // NaN counts included
  }
}

TEST_CASE("the earlier pass is reused only when it read the very same tensors at the same sizes") {
  const MhaConfig c = small(2, 6, 6, 12, 3);
  const MhaWeights w = init_weights(c.d_model, c.bias, c.seed);
  const MhaInputs in = random_inputs(c);
  const ForwardResult first = forward(c, w, in);

  MhaInputs copied = in;  // equal values, another storage
  copied.query = in.query.clone();
  copied.key = copied.value = copied.query;
  CHECK_FALSE(forward(c, w, copied, cpu_backend(), &first.trace).trace.reused_head_steps);

  MhaWeights other = w;  // equal values, another W_V
  other.W_V.weight = w.W_V.weight.clone();
  CHECK_FALSE(forward(c, other, in, cpu_backend(), &first.trace).trace.reused_head_steps);

  MhaConfig two_heads = c;  // same tensors, other head split
  two_heads.heads = 2;
  const ForwardResult split = forward(two_heads, w, in, cpu_backend(), &first.trace);
  CHECK_FALSE(split.trace.reused_head_steps);
  CHECK(split.trace.at("q_heads").out.shape() == Dims{2, 2, 6, 6});

  MhaConfig grouped = c;  // g = 1 reads W_K of another shape: other weights
  grouped.kv_heads = 1;
  const MhaWeights wg = init_weights(c.d_model, c.bias, c.seed, grouped.kv_dim());
  CHECK_FALSE(forward(grouped, wg, in, cpu_backend(), &first.trace).trace.reused_head_steps);
}
