// CPU ↔ CUDA parity: one parameterised harness runs every step of the forward pass on both
// backends over a grid of shapes (odd sizes, cross-attention, masks, fully hidden rows, bug
// modes) and checks the CUDA result with FlashAttention's rule:
//
//   max|cuda - ref64| <= 2 · max|cpu - ref64| + FLT_EPSILON · max|ref64|
//
// where cpu is the same math in float32 (the CPU backend) and ref64 the same math in double
// from the same float32 inputs. NaN and ±inf must sit at the same places in both. Each op is
// fed the CPU trace's own inputs, so a step is judged on its own, not on the drift of the
// steps before it; the whole pass is then checked end to end against a double forward.
// On failure the message names the step, the figures and the first mismatching indices.
//
// Every test needing a device starts with require_gpu(): on a machine without one the
// process exits 77 and CTest reports the test as skipped.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/cuda/cuda_backend.h"
#include "engine/error.h"
#include "engine/flash.h"
#include "engine/mask.h"
#include "engine/mha.h"
#include "engine/trace.h"
#include "gpu_skip.h"
#include "../helpers.h"

using namespace attnsim;
using attnsim::testing::require_gpu;

namespace {

// [SECTION] the comparison helper ---------------------------------------------------------

struct Figures {
  double err_fast = 0;      // max|fast - ref64| over cells finite in both
  double err_base = 0;      // max|base - ref64|
  double floor = 0;         // FLT_EPSILON · max|ref64|
  double tolerance = 0;     // 2 · err_base + floor
  double max_diff = 0;      // max|fast - base|, for the report
  int64_t special_mismatches = 0;  // NaN / ±inf in one and not the other
  std::string first;        // the first mismatches, with indices and values
  bool ok() const { return err_fast <= tolerance && special_mismatches == 0; }
};

std::string index_string(int64_t flat, const Dims& shape) {
  Dims idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  return format_dims(idx);
}

bool special(double x) { return std::isnan(x) || std::isinf(x); }
bool same_special(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (std::isinf(a) && a == b);
}

// fast, base: float32 results of the same shape; ref64: the double reference in C order.
Figures compare(const Tensor& fast, const Tensor& base, const std::vector<double>& ref64) {
  Figures f;
  const auto vf = fast.to_vector(), vb = base.to_vector();
  REQUIRE(fast.shape() == base.shape());
  REQUIRE(vf.size() == ref64.size());
  double ref_max = 0;
  for (double r : ref64)
    if (!special(r)) ref_max = std::fmax(ref_max, std::fabs(r));
  for (size_t i = 0; i < vf.size(); ++i) {
    const double r = ref64[i], a = vf[i], b = vb[i];
    if (!special(r) && !special(b)) f.err_base = std::fmax(f.err_base, std::fabs(b - r));
    if (!special(a) && !special(b)) f.max_diff = std::fmax(f.max_diff, std::fabs(a - b));
  }
  f.floor = FLT_EPSILON * ref_max;
  f.tolerance = 2 * f.err_base + f.floor;
  int shown = 0;
  for (size_t i = 0; i < vf.size(); ++i) {
    const double r = ref64[i], a = vf[i], b = vb[i];
    bool bad = false;
    if (special(a) || special(b)) {
      bad = !same_special(a, b);
      if (bad) ++f.special_mismatches;
    } else if (!special(r)) {
      f.err_fast = std::fmax(f.err_fast, std::fabs(a - r));
      bad = std::fabs(a - r) > f.tolerance;
    }
    if (bad && shown < 5) {
      std::ostringstream s;
      s << "  at " << index_string(static_cast<int64_t>(i), fast.shape()) << ": cuda " << a
        << ", cpu " << b << ", ref64 " << r << "\n";
      f.first += s.str();
      ++shown;
    }
  }
  return f;
}

std::string describe(const std::string& what, const Figures& f) {
  std::ostringstream s;
  s << what << ": max|cuda-ref64| = " << f.err_fast << ", tolerance = " << f.tolerance
    << " (2 x max|cpu-ref64| = " << 2 * f.err_base << " + floor " << f.floor
    << "), max|cuda-cpu| = " << f.max_diff << ", NaN/inf mismatches = " << f.special_mismatches;
  if (!f.first.empty()) s << "\nfirst mismatches:\n" << f.first;
  return s.str();
}

#define CHECK_PARITY(what, fast, base, ref)          \
  do {                                               \
    const Figures fig_ = compare(fast, base, ref);   \
    INFO(describe(what, fig_));                      \
    CHECK(fig_.ok());                                \
  } while (0)

// [SECTION] double references, one per op ---------------------------------------------------

// Logical contents in C order as double (to_vector reads any view).
std::vector<double> values64(const Tensor& t) {
  const auto v = t.to_vector();
  return std::vector<double>(v.begin(), v.end());
}

// y (B,T,out) = x·Wᵀ + b
std::vector<double> linear64(const Tensor& x, const Tensor& w, const Tensor& b) {
  const int64_t K = x.size(-1), N = w.size(0), M = x.numel() / K;
  const auto xv = values64(x), wv = values64(w);
  const auto bv = b.defined() ? values64(b) : std::vector<double>(static_cast<size_t>(N), 0.0);
  std::vector<double> y(static_cast<size_t>(M * N));
  for (int64_t r = 0; r < M; ++r)
    for (int64_t o = 0; o < N; ++o) {
      double s = bv[o];
      for (int64_t i = 0; i < K; ++i) s += xv[r * K + i] * wv[o * K + i];
      y[r * N + o] = s;
    }
  return y;
}

// c (B,h,M,N) = a (B,h,M,K) · (trans_b ? bᵀ : b)
std::vector<double> bmm64(const Tensor& a, const Tensor& b, bool trans_b) {
  const int64_t BH = a.size(0) * a.size(1), M = a.size(2), K = a.size(3);
  const int64_t N = trans_b ? b.size(2) : b.size(3);
  const auto av = values64(a), bv = values64(b);
  std::vector<double> c(static_cast<size_t>(BH * M * N));
  for (int64_t g = 0; g < BH; ++g)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k)
          s += av[(g * M + i) * K + k] * (trans_b ? bv[(g * N + j) * K + k] : bv[(g * K + k) * N + j]);
        c[(g * M + i) * N + j] = s;
      }
  return c;
}

struct Softmax64 {
  std::vector<double> scaled, masked, alpha;
};

// The three softmax-side steps in double, as SoftmaxSpec says (fp16 bug excluded).
Softmax64 softmax64(const Tensor& scores, const SoftmaxSpec& spec) {
  const int64_t B = scores.size(0), H = scores.size(1), Tq = scores.size(2), Tk = scores.size(3);
  Softmax64 r;
  r.scaled = values64(scores);
  for (double& x : r.scaled) x *= static_cast<double>(spec.scale);
  r.alpha.resize(r.scaled.size());
  const std::vector<double>* src = &r.scaled;
  if (spec.mask.defined()) {
    r.masked = r.scaled;
    const auto m1 = values64(spec.mask);  // expanded to (B,h,Tq,Tk): C order matches
    const auto m2 = spec.mask2.defined() ? values64(spec.mask2) : std::vector<double>();
    for (size_t e = 0; e < r.masked.size(); ++e) {
      const bool hid = m1[e] != 0;
      if (spec.additive)
        r.masked[e] += hid ? 1.0 : 0.0;
      else if (hid)
        r.masked[e] = spec.fill;
      if (!m2.empty() && m2[e] != 0) r.masked[e] = spec.fill;
    }
    src = &r.masked;
  }
  const bool rows = spec.axis == -1;
  const int64_t outer = rows ? Tq : Tk, inner = rows ? Tk : Tq;
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t o = 0; o < outer; ++o) {
      auto idx = [&](int64_t e) {
        const int64_t i = rows ? o : e, j = rows ? e : o;
        return static_cast<size_t>((bh * Tq + i) * Tk + j);
      };
      double mx = -INFINITY, sum = 0;
      for (int64_t e = 0; e < inner; ++e) mx = std::fmax(mx, (*src)[idx(e)]);
      for (int64_t e = 0; e < inner; ++e) sum += std::exp((*src)[idx(e)] - mx);  // all -inf: NaN
      for (int64_t e = 0; e < inner; ++e) r.alpha[idx(e)] = std::exp((*src)[idx(e)] - mx) / sum;
    }
  return r;
}

// The attention core in double: q, k, v heads -> ctx (B,h,Tq,dk); hidden (B,Tq,Tk) C order
// (empty = nothing hidden). A fully hidden row is NaN.
std::vector<double> core64(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                           const std::vector<double>& hidden) {
  const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), Tk = k.size(2), dk = q.size(3);
  const auto qv = values64(q), kv = values64(k), vv = values64(v);
  std::vector<double> out(static_cast<size_t>(B * H * Tq * dk));
  std::vector<double> s(static_cast<size_t>(Tk));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Tq; ++i) {
        const int64_t g = b * H + h;
        double mx = -INFINITY;
        for (int64_t j = 0; j < Tk; ++j) {
          double x = 0;
          for (int64_t c = 0; c < dk; ++c) x += qv[(g * Tq + i) * dk + c] * kv[(g * Tk + j) * dk + c];
          const bool hid = !hidden.empty() && hidden[(b * Tq + i) * Tk + j] != 0;
          s[j] = hid ? -INFINITY : x * scale;
          mx = std::fmax(mx, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < Tk; ++j) sum += std::exp(s[j] - mx);  // all hidden: NaN
        for (int64_t c = 0; c < dk; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < Tk; ++j) acc += std::exp(s[j] - mx) / sum * vv[(g * Tk + j) * dk + c];
          out[(g * Tq + i) * dk + c] = acc;
        }
      }
  return out;
}

// [SECTION] the grid ------------------------------------------------------------------------

struct Case {
  const char* name;
  int64_t batch, tq, tk, d_model, heads;
  bool self_attention, bias;
  const char* mask;  // parse_mask_spec text
  Bug bug = Bug::None;
};

const std::vector<Case>& grid() {
  static const std::vector<Case> cases = {
      {"tiny odd self-attention", 2, 7, 7, 12, 3, true, true, ""},
      {"cross-attention Tq != Tk, dk = 5", 3, 5, 11, 20, 4, false, true, ""},
      {"no bias, causal", 2, 9, 9, 16, 2, true, false, "causal"},
      {"key padding, right", 2, 6, 13, 24, 3, false, true, "key-padding=13:4"},
      {"query padding leaves NaN rows", 2, 8, 8, 16, 4, true, true,
       "causal,key-padding=8:5,query-padding=8:3"},
      {"left padding", 3, 10, 10, 30, 5, true, true, "key-padding=10:6:1,side=left"},
      {"dk = 64 ragged tiles, causal", 1, 70, 70, 128, 2, true, true, "causal"},
      {"dk = 64 cross, padding", 2, 33, 129, 128, 2, false, true, "key-padding=100:129"},
      {"article's d and h, B=1 T=128", 1, 128, 128, 512, 8, true, true, "causal"},
      {"additive mask bug", 2, 6, 6, 8, 2, true, true, "causal", Bug::MaskAdditive},
      {"finite fill bug", 2, 6, 6, 8, 2, true, true, "causal,query-padding=6:4",
       Bug::MaskFiniteFill},
      {"two fills bug", 2, 6, 6, 8, 2, true, true, "causal,key-padding=6:4", Bug::MaskTwoFills},
      {"wrong axis bug", 2, 5, 7, 8, 2, false, true, "", Bug::SoftmaxWrongAxis},
      {"no scale bug", 1, 9, 9, 16, 4, true, true, "causal", Bug::NoScale},
  };
  return cases;
}

struct Run {
  MhaConfig config;
  MhaWeights weights;
  MhaInputs inputs;
};

Run make_run(const Case& c, uint64_t seed) {
  Run r;
  r.config.batch = c.batch;
  r.config.tq = c.tq;
  r.config.tk = c.tk;
  r.config.d_model = c.d_model;
  r.config.heads = c.heads;
  r.config.self_attention = c.self_attention;
  r.config.bias = c.bias;
  r.config.seed = seed;
  r.config.mask = parse_mask_spec(c.mask);
  r.config.bug = c.bug;
  r.weights = init_weights(c.d_model, c.bias, seed);
  r.inputs = random_inputs(r.config);
  return r;
}

// The SoftmaxSpec forward() builds, rebuilt from the trace (mask step) and the config.
SoftmaxSpec spec_from(const Run& run, const Trace& t) {
  const MhaConfig& c = run.config;
  SoftmaxSpec spec;
  const int64_t dk = c.head_dim();
  spec.scale = c.bug == Bug::NoScale ? 1.0f : 1.0f / std::sqrt(static_cast<float>(dk));
  const Step& m = t.at("mask");
  if (!m.skipped()) {
    const Dims full{c.batch, c.heads, c.tq, c.tk};
    if (c.bug == Bug::MaskTwoFills) {  // as forward(): causal first, padding second
      spec.mask = build_causal_mask(c.batch, c.tq, c.tk).expand(full);
      spec.mask2 = build_padding_mask(c.mask, c.batch, c.tq, c.tk).expand(full);
    } else {
      spec.mask = m.out.expand(full);
    }
  }
  if (c.bug == Bug::MaskFiniteFill) spec.fill = -1e9f;
  spec.additive = c.bug == Bug::MaskAdditive;
  if (c.bug == Bug::SoftmaxWrongAxis) spec.axis = -2;
  return spec;
}

}  // namespace

// [SECTION] tests ---------------------------------------------------------------------------

TEST_CASE("every step on CUDA matches the CPU within the same-math float tolerance", "[gpu]") {
  require_gpu();
  Backend& cpu = cpu_backend();
  Backend& gpu = backend_by_name("cuda");
  uint64_t seed = 11;
  for (const Case& c : grid()) {
    INFO("case: " << c.name << " (B=" << c.batch << " Tq=" << c.tq << " Tk=" << c.tk
                  << " d=" << c.d_model << " h=" << c.heads << " mask '" << c.mask << "')");
    const Run run = make_run(c, seed++);
    const ForwardResult ref = forward(run.config, run.weights, run.inputs, cpu);
    const Trace& t = ref.trace;
    auto out = [&](const char* name) { return t.at(name).out; };

    // projections: cuBLAS sgemm
    const MhaWeights& w = run.weights;
    CHECK_PARITY("q_proj", gpu.linear(out("query"), w.W_Q.weight, w.W_Q.bias), out("q_proj"),
                 linear64(out("query"), w.W_Q.weight, w.W_Q.bias));
    CHECK_PARITY("k_proj", gpu.linear(out("key"), w.W_K.weight, w.W_K.bias), out("k_proj"),
                 linear64(out("key"), w.W_K.weight, w.W_K.bias));
    CHECK_PARITY("v_proj", gpu.linear(out("value"), w.W_V.weight, w.W_V.bias), out("v_proj"),
                 linear64(out("value"), w.W_V.weight, w.W_V.bias));
    // scores from the transposed views, read in place
    CHECK_PARITY("scores", gpu.qk(out("q_heads"), out("k_heads")), out("scores"),
                 bmm64(out("q_heads"), out("k_heads"), true));
    // scale + mask + softmax, both kernel versions where they apply
    const SoftmaxSpec spec = spec_from(run, t);
    const Softmax64 sm64 = softmax64(out("scores"), spec);
    for (int version : {1, 2}) {
      if (version == 2 && spec.axis != -1) continue;
      cuda_set_softmax_version(version);
      const SoftmaxSteps sm = gpu.scale_mask_softmax(out("scores"), spec);
      cuda_set_softmax_version(0);
      INFO("softmax kernel v" << version);
      CHECK(cuda_last_softmax_version() == version);
      CHECK_PARITY("scores_scaled", sm.scaled, out("scores_scaled"), sm64.scaled);
      if (spec.mask.defined()) {
        REQUIRE(sm.masked.defined());
        CHECK_PARITY("scores_masked", sm.masked, out("scores_masked"), sm64.masked);
      } else {
        CHECK_FALSE(sm.masked.defined());
      }
      CHECK_PARITY("alpha", sm.alpha, out("alpha"), sm64.alpha);
    }
    // alpha·v, the copy, the output projection
    CHECK_PARITY("ctx_heads", gpu.av(out("alpha"), out("v_heads")), out("ctx_heads"),
                 bmm64(out("alpha"), out("v_heads"), false));
    const Tensor ctx_c = gpu.contiguous(out("ctx_transposed"));
    CHECK(ctx_c.is_contiguous());
    CHECK_PARITY("ctx_contiguous", ctx_c, out("ctx_contiguous"), values64(out("ctx_contiguous")));
    CHECK_PARITY("out", gpu.linear(out("ctx_concat"), w.W_O.weight, w.W_O.bias), out("out"),
                 linear64(out("ctx_concat"), w.W_O.weight, w.W_O.bias));
  }
}

TEST_CASE("the whole forward pass on CUDA: same steps, made by cuda, same result", "[gpu]") {
  require_gpu();
  uint64_t seed = 101;
  for (const Case& c : grid()) {
    INFO("case: " << c.name);
    const Run run = make_run(c, seed++);
    const ForwardResult cpu = forward(run.config, run.weights, run.inputs, cpu_backend());
    const ForwardResult gpu = forward(run.config, run.weights, run.inputs, backend_by_name("cuda"));
    REQUIRE(gpu.trace.steps.size() == cpu.trace.steps.size());
    for (size_t i = 0; i < cpu.trace.steps.size(); ++i) {
      const Step& a = gpu.trace.steps[i];
      const Step& b = cpu.trace.steps[i];
      INFO("step " << b.name);
      CHECK(a.name == b.name);
      CHECK(a.kind == b.kind);
      if (b.kind == StepKind::Compute && b.name != "mask") CHECK(a.backend == "cuda");
      if (!b.skipped()) CHECK(a.out.shape() == b.out.shape());
      CHECK(a.nan_count == b.nan_count);  // NaN rows appear and spread the same way
    }
    // end to end: out (or the last step that ran) against the pass in double
    const Step& o = cpu.trace.at("out");
    if (o.skipped() || run.config.bug != Bug::None) continue;
    const Trace& t = cpu.trace;
    const double scale = 1.0 / std::sqrt(static_cast<double>(run.config.head_dim()));
    const Tensor mask = t.at("mask").out;  // (B,1,Tq,Tk) or undefined
    const std::vector<double> hidden = mask.defined() ? values64(mask) : std::vector<double>();
    // ref64: every step in double from the float inputs and weights
    const MhaWeights& w = run.weights;
    // q64 (B,Tq,d), k64 v64 (B,Tk,d): projections in double; head h is columns h*dk..
    const std::vector<double> q64 = linear64(t.at("query").out, w.W_Q.weight, w.W_Q.bias);
    const std::vector<double> k64 = linear64(t.at("key").out, w.W_K.weight, w.W_K.bias);
    const std::vector<double> v64 = linear64(t.at("value").out, w.W_V.weight, w.W_V.bias);
    const int64_t B = run.config.batch, Tq = run.config.tq, Tk = run.config.tk,
                  d = run.config.d_model, H = run.config.heads, dk = d / H;
    std::vector<double> ctx(static_cast<size_t>(B * Tq * d));  // (B,Tq,d) concat layout
    std::vector<double> s(static_cast<size_t>(Tk));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < Tq; ++i) {
          double mx = -INFINITY;
          for (int64_t j = 0; j < Tk; ++j) {
            double x = 0;
            for (int64_t c2 = 0; c2 < dk; ++c2)
              x += q64[(b * Tq + i) * d + h * dk + c2] * k64[(b * Tk + j) * d + h * dk + c2];
            const bool hid = !hidden.empty() && hidden[(b * Tq + i) * Tk + j] != 0;
            s[j] = hid ? -INFINITY : x * scale;
            mx = std::fmax(mx, s[j]);
          }
          double sum = 0;
          for (int64_t j = 0; j < Tk; ++j) sum += std::exp(s[j] - mx);
          for (int64_t c2 = 0; c2 < dk; ++c2) {
            double acc = 0;
            for (int64_t j = 0; j < Tk; ++j)
              acc += std::exp(s[j] - mx) / sum * v64[(b * Tk + j) * d + h * dk + c2];
            ctx[(b * Tq + i) * d + h * dk + c2] = acc;
          }
        }
    const auto wo = values64(w.W_O.weight);
    const auto bo = w.W_O.bias.defined() ? values64(w.W_O.bias) : std::vector<double>(d, 0.0);
    std::vector<double> out64(static_cast<size_t>(B * Tq * d));
    for (int64_t r = 0; r < B * Tq; ++r)
      for (int64_t o2 = 0; o2 < d; ++o2) {
        double acc = bo[o2];
        for (int64_t i = 0; i < d; ++i) acc += ctx[r * d + i] * wo[o2 * d + i];
        out64[r * d + o2] = acc;
      }
    CHECK_PARITY("out (whole pass)", gpu.trace.at("out").out, o.out, out64);
  }
}

TEST_CASE("flash kernels v1 and v2 match the standard path, NaN rows included", "[gpu]") {
  require_gpu();
  uint64_t seed = 201;
  for (const Case& c : grid()) {
    if (c.bug != Bug::None) continue;
    INFO("case: " << c.name);
    const Run run = make_run(c, seed++);
    const ForwardResult std32 = forward(run.config, run.weights, run.inputs, cpu_backend());
    const Trace& t = std32.trace;
    FlashMask fm;
    fm.causal = run.config.mask.causal;
    fm.key_lengths = run.config.mask.key_lengths;
    fm.query_lengths = run.config.mask.query_lengths;
    fm.side = run.config.mask.side;
    const Tensor mask = t.at("mask").out;  // (B,1,Tq,Tk) or undefined
    const float scale = 1.0f / std::sqrt(static_cast<float>(run.config.head_dim()));
    const std::vector<double> ref =
        core64(t.at("q_heads").out, t.at("k_heads").out, t.at("v_heads").out, scale,
               mask.defined() ? values64(mask) : std::vector<double>());
    struct Blocks {
      int64_t bq, bk;
      int version;
    };
    for (const Blocks bl : {Blocks{64, 64, 0}, Blocks{16, 32, 1}, Blocks{7, 5, 1}, Blocks{64, 64, 1}}) {
      FlashOptions fo;
      fo.block_q = bl.bq;
      fo.block_k = bl.bk;
      fo.record_tiles = true;
      INFO("blocks " << bl.bq << "x" << bl.bk << " version " << bl.version);
      for (bool dense : {false, true}) {
        FlashMask m = fm;
        if (dense) {  // the same mask as a dense bool tensor read through its strides
          m = FlashMask();
          m.dense = mask;
        }
        const FlashCoreResult r = cuda_flash_attention_core(
            t.at("q_heads").out, t.at("k_heads").out, t.at("v_heads").out, m, scale, fo, bl.version);
        INFO((dense ? "dense mask" : "structured mask") << ", kernel v" << cuda_last_flash_version());
        CHECK_PARITY("flash ctx_heads", r.out, t.at("ctx_heads").out, ref);
        // after the last tile: running max = row max of the scores; running sum = Σ exp(s - m)
        const Tensor sm = t.at(mask.defined() ? "scores_masked" : "scores_scaled").out;
        const int64_t B = run.config.batch, H = run.config.heads, Tq = run.config.tq,
                      Tk = run.config.tk;
        double worst_m = 0, worst_l = 0;
        for (int64_t b = 0; b < B; ++b)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < Tq; ++i) {
              double mx = -INFINITY, sum = 0;
              for (int64_t j = 0; j < Tk; ++j) mx = std::fmax(mx, sm.at({b, h, i, j}));
              for (int64_t j = 0; j < Tk; ++j) sum += mx == -INFINITY ? 0 : std::exp(sm.at({b, h, i, j}) - mx);
              const double gm = r.m.at({b, h, i}), gl = r.l.at({b, h, i});
              if (mx == -INFINITY) {
                CHECK(gm == -INFINITY);
                CHECK(gl == 0);
              } else {
                worst_m = std::fmax(worst_m, std::fabs(gm - mx));
                worst_l = std::fmax(worst_l, std::fabs(gl - sum) / sum);
              }
            }
        // scores come from different summation orders (kernel FMAs vs BLAS): a few ulp at
        // the scale of the scores, so these bounds are loose on purpose
        CHECK(worst_m <= 1e-4);
        CHECK(worst_l <= 1e-3);
        // tile events: in flash.h order, and each tile's m_after is its successor's m_before
        REQUIRE_FALSE(r.events.empty());
        int64_t tiles = 0;
        for (size_t e = 0; e < r.events.size(); ++e) {
          const FlashEvent& ev = r.events[e];
          if (ev.kind == FlashEventKind::Final) continue;
          ++tiles;
          for (int64_t rr = 0; rr < ev.rows; ++rr) {
            const float mb = ev.m_before.f32()[rr], ma = ev.m_after.f32()[rr];
            CHECK((ma >= mb || (std::isinf(ma) && std::isinf(mb))));
          }
        }
        CHECK(tiles == r.stats.tiles_total);
      }
    }
  }
}

TEST_CASE("softmax kernels: fp16-without-max bug gives the CPU's infs and NaNs", "[gpu]") {
  require_gpu();
  // logits large enough that exp overflows half precision (> 11.09)
  const Tensor scores = Tensor::from_values({1, 1, 2, 4}, {1, 2, 3, 4, 10, 12, 3, -2});
  SoftmaxSpec spec;
  spec.fp16_no_max = true;
  const SoftmaxSteps gpu = backend_by_name("cuda").scale_mask_softmax(scores, spec);
  const SoftmaxSteps cpu = cpu_backend().scale_mask_softmax(scores, spec);
  const auto a = gpu.alpha.to_vector(), b = cpu.alpha.to_vector();
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("index " << i << ": cuda " << a[i] << ", cpu " << b[i]);
    if (std::isnan(b[i]))
      CHECK(std::isnan(a[i]));
    else
      CHECK(std::fabs(a[i] - b[i]) <= 1e-3);  // half precision
  }
}

TEST_CASE("with copy-back off only the steps fetched reach the host", "[gpu]") {
  require_gpu();
  Backend& gpu = backend_by_name("cuda");
  const Tensor q = Tensor::from_values({1, 1, 2, 2}, {1, 0, 0, 1});
  cuda_set_copy_back(false);
  Tensor s = gpu.qk(q, q);  // stays on the device
  s.f32()[0] = -7;          // host contents are not written by the op
  const SoftmaxSteps sm = gpu.scale_mask_softmax(s, SoftmaxSpec());  // reads the device copy
  cuda_set_copy_back(true);
  CHECK(s.f32()[0] == -7);
  cuda_fetch(s);
  CHECK(s.f32()[0] == 1);
  cuda_fetch(sm.alpha);
  CHECK(sm.alpha.f32()[0] == Approx(std::exp(1.0) / (std::exp(1.0) + 1)));
}

TEST_CASE("cuda_forward copies only the kept steps down and still counts every NaN", "[gpu]") {
  require_gpu();
  uint64_t seed = 301;
  for (const Case& c : grid()) {
    if (c.bug != Bug::None) continue;
    INFO("case: " << c.name);
    const Run run = make_run(c, seed++);
    const ForwardResult cpu = forward(run.config, run.weights, run.inputs, cpu_backend());
    const ForwardResult gpu = cuda_forward(run.config, run.weights, run.inputs, {"out", "alpha"});
    REQUIRE(gpu.trace.steps.size() == cpu.trace.steps.size());
    for (size_t i = 0; i < cpu.trace.steps.size(); ++i) {
      const Step& a = gpu.trace.steps[i];
      const Step& b = cpu.trace.steps[i];
      INFO("step " << b.name << " note '" << a.note << "'");
      CHECK(a.nan_count == b.nan_count);
      CHECK(a.neginf_count == b.neginf_count);
      const bool device_only = a.note.find("on the device only") != std::string::npos;
      if (b.name == "out" || b.name == "alpha") CHECK_FALSE(device_only);
      if (b.name == "scores" || b.name == "ctx_contiguous") CHECK(device_only);
    }
    const Step& o = cpu.trace.at("out");
    CHECK(test::max_abs_diff(gpu.trace.at("out").out, o.out) <= 1e-3);
    CHECK(test::max_abs_diff(gpu.trace.at("alpha").out, cpu.trace.at("alpha").out) <= 1e-5);
  }
}

TEST_CASE("the CLI with backend cuda runs where a GPU is present, else one line and exit 2") {
  // Runs everywhere: this is the no-GPU behaviour the CLI promises.
  const std::string cmd = std::string(ATTNSIM_CLI) + " trace --backend cuda 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  const int status = pclose(pipe);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  INFO(output);
  if (cuda_available()) {
    CHECK(code == 0);
  } else {
    CHECK(code == 2);
    CHECK(output.find("cuda") != std::string::npos);
    CHECK(std::count(output.begin(), output.end(), '\n') == 1);
  }
}

TEST_CASE("backend_by_name knows cpu and cuda and names the choices otherwise") {
  CHECK(backend_by_name("cpu").name() == "cpu");
  CHECK_THROWS_WITH(backend_by_name("tpu"), Catch::Contains("cpu or cuda"));
  std::string why;
  if (!cuda_available(&why)) {
    CHECK_FALSE(why.empty());
    CHECK_THROWS_WITH(backend_by_name("cuda"), Catch::Contains("not available"));
  }
}
