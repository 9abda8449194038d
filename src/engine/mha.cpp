#include "mha.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "checked.h"
#include "cost.h"
#include "error.h"
#include "forward_steps.h"
#include "npy.h"
#include "parallel.h"
#include "random.h"

namespace attnsim {

// [SECTION] config and inputs

void validate(const MhaConfig& c) {
  auto positive = [](const char* what, int64_t v) {
    if (v <= 0) throw Error(std::string(what) + " must be positive, got " + std::to_string(v));
  };
  positive("batch", c.batch);
  positive("tq", c.tq);
  positive("tk", c.tk);
  positive("d_model", c.d_model);
  positive("heads", c.heads);
  if (c.d_model % c.heads != 0)
    throw Error("d_model " + std::to_string(c.d_model) + " is not divisible by heads " +
                std::to_string(c.heads) + " (" + std::to_string(c.d_model) + " = " +
                std::to_string(c.d_model / c.heads) + "·" + std::to_string(c.heads) + " + " +
                std::to_string(c.d_model % c.heads) + "): d_k = d_model / heads must be whole");
  if (c.kv_heads < 0) throw Error("kv-heads must not be negative, got " + std::to_string(c.kv_heads));
  if (c.heads % c.kv_group_count() != 0)
    throw Error("heads " + std::to_string(c.heads) + " is not divisible by kv-heads " +
                std::to_string(c.kv_heads) + ": each key/value head serves a whole group of query heads");
  if (c.self_attention && c.tq != c.tk)
    throw Error("self-attention uses one sequence, so tq (" + std::to_string(c.tq) +
                ") must equal tk (" + std::to_string(c.tk) + "); give separate query/key inputs for cross-attention");
  if (!(c.dropout >= 0.0f && c.dropout < 1.0f))
    throw Error("dropout must be in [0, 1), got " + std::to_string(c.dropout));
  if (c.mem_limit < 0) throw Error("mem-limit must not be negative");
}

// Each value depends only on (seed, stream, index), so chunks fill in parallel and give the
// same tensor on any number of threads.
static Tensor random_tensor(const Dims& shape, uint64_t seed, Stream stream) {
  Tensor t = Tensor::empty(shape);
  float* p = t.f32();
  parallel_for(t.numel(), int64_t{1} << 16, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i)
      p[i] = random_normal(seed, static_cast<uint64_t>(stream), static_cast<uint64_t>(i));
  });
  return t;
}

MhaInputs random_inputs(const MhaConfig& c) {
  validate(c);
  MhaInputs in;
  in.query = random_tensor({c.batch, c.tq, c.d_model}, c.seed, Stream::Query);  // (B,Tq,d)
  if (c.self_attention) {
    in.key = in.value = in.query;
  } else {
    in.key = random_tensor({c.batch, c.tk, c.d_model}, c.seed, Stream::Key);      // (B,Tk,d)
    in.value = random_tensor({c.batch, c.tk, c.d_model}, c.seed, Stream::Value);  // (B,Tk,d)
  }
  return in;
}

void check_inputs(const MhaConfig& c, const MhaInputs& in) {
  auto expect = [](const char* what, const Tensor& t, const Dims& shape) {
    if (!t.defined()) throw Error(std::string("missing input '") + what + "'");
    if (t.dtype() != DType::F32) throw Error(std::string("input '") + what + "' must be float32");
    if (t.shape() != shape)
      throw Error(std::string("input '") + what + "' has shape " + format_dims(t.shape()) +
                  " but the config needs " + format_dims(shape));
  };
  expect("query", in.query, {c.batch, c.tq, c.d_model});
  expect("key", in.key, {c.batch, c.tk, c.d_model});
  expect("value", in.value, {c.batch, c.tk, c.d_model});
  if (in.mask_file.defined()) {
    if (in.mask_file.dtype() != DType::Bool)
      throw Error("the mask file must be bool (true = hidden), got float32");
    const Dims full{c.batch, c.heads, c.tq, c.tk};
    const Dims& ms = in.mask_file.shape();
    bool fits = ms.size() <= 4;
    for (size_t i = 0; fits && i < ms.size(); ++i) {
      const int64_t want = full[4 - ms.size() + i];
      fits = ms[i] == 1 || ms[i] == want;
    }
    if (!fits)
      throw Error("mask of shape " + format_dims(in.mask_file.shape()) +
                  " does not broadcast to the scores' shape " + format_dims(full));
  }
  for (const HeadPatch& p : in.head_patches) {
    if (p.head < 0 || p.head >= c.heads)
      throw Error("ablated head " + std::to_string(p.head) + " is out of range: the layer has heads 0.." +
                  std::to_string(c.heads - 1));
    if (!p.value.empty() && static_cast<int64_t>(p.value.size()) != c.head_dim())
      throw Error("mean-ablation vector for head " + std::to_string(p.head) + " has " +
                  std::to_string(p.value.size()) + " values but d_k is " + std::to_string(c.head_dim()));
  }
}

// [SECTION] weights

MhaWeights init_weights(int64_t d, bool bias, uint64_t seed, int64_t kv_dim) {
  const int64_t kv = kv_dim ? kv_dim : d;
  const float bound = 1.0f / std::sqrt(static_cast<float>(d));
  auto uniform = [&](const Dims& shape, Stream stream) {
    Tensor t = Tensor::empty(shape);
    float* p = t.f32();
    parallel_for(t.numel(), int64_t{1} << 16, [&](int64_t first, int64_t last) {  // as random_tensor
      for (int64_t i = first; i < last; ++i)
        p[i] = (2.0f * random_uniform(seed, static_cast<uint64_t>(stream), i) - 1.0f) * bound;
    });
    return t;
  };
  auto make = [&](int64_t out, Stream w, Stream b) {
    return Linear{uniform({out, d}, w), bias ? uniform({out}, b) : Tensor()};
  };
  return {make(d, Stream::WQ, Stream::BQ), make(kv, Stream::WK, Stream::BK), make(kv, Stream::WV, Stream::BV),
          make(d, Stream::WO, Stream::BO)};
}

static const char* const kWeightNames[] = {"W_Q", "W_K", "W_V", "W_O"};

MhaWeights load_weights(const std::string& dir, int64_t d, bool bias, int64_t kv_dim) {
  MhaWeights w;
  Linear* slots[] = {&w.W_Q, &w.W_K, &w.W_V, &w.W_O};
  const int64_t kv = kv_dim ? kv_dim : d;
  for (int i = 0; i < 4; ++i) {
    const std::string base = dir + "/" + kWeightNames[i];
    const int64_t out = i == 1 || i == 2 ? kv : d;
    slots[i]->weight = read_npy(base + ".weight.npy");
    if (slots[i]->weight.shape() != Dims{out, d} || slots[i]->weight.dtype() != DType::F32)
      throw Error(base + ".weight.npy has shape " + format_dims(slots[i]->weight.shape()) +
                  " but d_model " + std::to_string(d) + (kv != d ? " with kv-heads" : "") + " needs float32 " +
                  format_dims({out, d}));
    if (!bias) continue;
    if (!std::filesystem::exists(base + ".bias.npy"))
      throw Error(base + ".bias.npy is missing (use --no-bias for weights without biases)");
    slots[i]->bias = read_npy(base + ".bias.npy");
    if (slots[i]->bias.shape() != Dims{out} || slots[i]->bias.dtype() != DType::F32)
      throw Error(base + ".bias.npy has shape " + format_dims(slots[i]->bias.shape()) +
                  " but needs float32 " + format_dims({out}));
  }
  return w;
}

void save_weights(const MhaWeights& w, const std::string& dir) {
  const Linear* slots[] = {&w.W_Q, &w.W_K, &w.W_V, &w.W_O};
  for (int i = 0; i < 4; ++i) {
    write_npy(dir + "/" + kWeightNames[i] + ".weight.npy", slots[i]->weight);
    if (slots[i]->bias.defined()) write_npy(dir + "/" + kWeightNames[i] + ".bias.npy", slots[i]->bias);
  }
}

// [SECTION] memory prediction

float attention_scale(const MhaConfig& c) {
  return c.bug == Bug::NoScale ? 1.0f : 1.0f / std::sqrt(static_cast<float>(c.head_dim()));
}

int64_t predict_trace_bytes(const MhaConfig& c) {
  validate(c);
  // Checked arithmetic: a size that would wrap is an Error naming the numbers.
  const Size f = 4, B = c.batch, Tq = c.tq, Tk = c.tk, d = c.d_model, h = c.heads;
  const Size q_side = B * Tq * d * f, k_side = B * Tk * d * f, kv_side = B * Tk * c.kv_dim() * f;
  const Size score = B * h * Tq * Tk * f;
  const bool masked = !c.mask.empty() || is_mask_bug(c.bug);
  Size bytes = c.self_attention ? q_side : q_side + Size(2) * k_side;  // query key value
  bytes += q_side + Size(2) * kv_side;                                 // q_proj k_proj v_proj
  if (c.rope_theta > 0) bytes += q_side + kv_side;                     // q_rot k_rot
  if (c.grouped() && c.kv_repeat_copy) bytes += Size(2) * k_side;      // k_grouped v_grouped copies
  bytes += Size(2) * score;                                            // scores scores_scaled
  if (masked) bytes += score + Size(3) * B * Tq * Tk;                  // scores_masked, mask (+ its parts)
  bytes += score;                                                      // alpha
  if (c.train && c.dropout > 0) bytes += score;                        // alpha_dropped
  bytes += Size(2) * q_side;                                           // ctx_heads ctx_contiguous
  if (!c.wo_identity) bytes += q_side;                                 // out
  return bytes.value();
}

int64_t predict_input_bytes(const MhaConfig& c) {
  validate(c);
  const Size q_side = Size(c.batch) * c.tq * c.d_model * 4, k_side = Size(c.batch) * c.tk * c.d_model * 4;
  return (c.self_attention ? q_side : q_side + Size(2) * k_side).value();  // (B,Tq,d) [+ 2·(B,Tk,d)]
}

int64_t predict_weight_bytes(int64_t d_model, bool bias) {
  // An upper bound: W_K and W_V have kv_dim <= d_model rows.
  const Size d = d_model;
  return (Size(4) * (d * d + (bias ? d : Size(0))) * 4).value();  // 4 × ((d,d) + (d,)) float32
}

int64_t effective_mem_limit(const MhaConfig& c) {
  if (c.mem_limit > 0) return c.mem_limit;
  const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  int64_t limit = physical / 4 * 3;
  // Under `ulimit -v` an allocation past the cap fails however much memory the machine has:
  // predict against the cap too, so the refusal is the prediction's one line, not bad_alloc.
  struct rlimit as {};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    limit = std::min<int64_t>(limit, static_cast<int64_t>(as.rlim_cur / 4 * 3));
  return limit;
}

// [SECTION] forward

namespace {

// A step whose counts the backend already took (when `known`).
Step with_counts(Step s, bool known, const NonFinite& c) {
  s.counts_known = known;
  s.nan_count = c.nan;
  s.neginf_count = c.neginf;
  s.posinf_count = c.posinf;
  return s;
}

// The mask step's tensor and, for the two-fills bug, the two parts it is made of.
struct MaskParts {
  Tensor mask, first, second;
};

MaskParts make_mask(const MhaConfig& c, const Tensor& mask_file) {
  MaskParts parts;
  parts.mask = build_mask(c.mask, c.batch, c.tq, c.tk);  // (B,1,Tq,Tk) or undefined
  if (mask_file.defined())
    parts.mask = parts.mask.defined() ? mask_or(parts.mask, mask_file) : mask_file;
  if (!parts.mask.defined()) return parts;
  if (c.bug == Bug::MaskInverted || c.bug == Bug::MaskInvertedFiniteFill) parts.mask = mask_not(parts.mask);
  if (c.bug == Bug::MaskTwoFills && c.mask.causal && !mask_file.defined() &&
      (!c.mask.key_lengths.empty() || !c.mask.query_lengths.empty())) {
    parts.first = build_causal_mask(c.batch, c.tq, c.tk);
    parts.second = build_padding_mask(c.mask, c.batch, c.tq, c.tk);
  }
  return parts;
}

// Overwrites each patched head's (B,Tq,dk) slice of ctx_heads (B,h,Tq,dk, fresh storage) and
// returns the step note, e.g. "ablated: head 1 (zero), head 3 (mean)".
std::string apply_head_patches(Tensor& ctx_heads, const std::vector<HeadPatch>& patches) {
  std::string note;
  const int64_t B = ctx_heads.size(0), T = ctx_heads.size(2), dk = ctx_heads.size(3);
  const Dims& st = ctx_heads.strides();
  for (const HeadPatch& p : patches) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < T; ++i) {
        float* row = ctx_heads.f32() + b * st[0] + p.head * st[1] + i * st[2];
        for (int64_t e = 0; e < dk; ++e) row[e * st[3]] = p.value.empty() ? 0.0f : p.value[e];
      }
    note += std::string(note.empty() ? "ablated: " : ", ") + "head " + std::to_string(p.head) +
            (p.value.empty() ? " (zero)" : " (mean)");
  }
  return note;
}

}  // namespace

ForwardResult forward(const MhaConfig& c, const MhaWeights& w, const MhaInputs& in, Backend& be,
                      const Trace* earlier) {
  validate(c);
  check_inputs(c, in);
  const int64_t need = predict_trace_bytes(c), limit = effective_mem_limit(c);
  if (need > limit)
    throw Error("this configuration needs " + human_bytes(need) + " (" + format_count(need) +
                " bytes) to keep its trace, over the limit of " + human_bytes(limit) +
                (c.mem_limit > 0 ? " (--mem-limit)" : " (75% of physical memory; --mem-limit overrides)") +
                "; each (B,h,Tq,Tk) score tensor alone is " +
                human_bytes((Size(c.batch) * c.heads * c.tq * c.tk * 4).value()));
  const int64_t B = c.batch, Tq = c.tq, Tk = c.tk, d = c.d_model, h = c.heads;
  const std::string bn = be.name();
  ForwardResult result;
  Trace& t = result.trace;

  const Heads heads = add_head_steps(t, c, w, in, be, earlier);
  // g < h: the query heads of a group read one K/V head        (B,g,h/g,Tk,dk) view
  const KvRead kv = add_group_steps(t, c, heads.k, heads.v, heads.k_name, "v_heads", be);

  // What the softmax side does: scale, mask (or a bug mode)
  const MaskParts mask = make_mask(c, in.mask_file);
  SoftmaxSpec spec;
  spec.scale = attention_scale(c);
  if (mask.mask.defined()) {
    const Dims full{B, h, Tq, Tk};
    spec.mask = (mask.first.defined() ? mask.first : mask.mask).expand(full);
    if (mask.second.defined()) spec.mask2 = mask.second.expand(full);
  }
  if (c.bug == Bug::MaskFiniteFill || c.bug == Bug::MaskInvertedFiniteFill) spec.fill = -1e9f;
  spec.additive = c.bug == Bug::MaskAdditive;
  if (c.bug == Bug::SoftmaxWrongAxis) spec.axis = -2;
  spec.fp16_no_max = c.bug == Bug::SoftmaxNoMaxFp16;

  // The core in one call (the backend may interleave it per head), then its steps in order:
  // scores = q·kᵀ, scale, mask, softmax, dropout, ctx = alpha·v    (B,h,Tq,Tk) ... (B,h,Tq,dk)
  const float dropout_p = c.train ? c.dropout : 0.0f;
  const AttentionCore core = be.attention_core(heads.q, kv.k, kv.v, spec, dropout_p, c.seed);
  const SoftmaxSteps& sm = core.softmax;
  t.add(made_step("scores", "matmul q·kᵀ", {heads.q_name, kv.k_name}, StepKind::Compute, core.scores, bn));
  t.add(with_counts(made_step("scores_scaled", c.bug == Bug::NoScale ? "scale ×1 (no-scale bug)" : "scale ×1/√dk",
                              {"scores"}, StepKind::Compute, sm.scaled, bn),
                    sm.counted, sm.scaled_counts));
  const char* softmax_input = "scores_scaled";
  if (mask.mask.defined()) {
    Step ms = made_step("mask", "build mask", {}, StepKind::Compute, mask.mask, "");
    ms.note = format_mask_spec(c.mask);
    t.add(std::move(ms));
    const char* op = spec.additive                ? "scores + float(mask) (additive bug)"
                     : mask.second.defined()      ? "masked_fill ×2 (two-fills bug)"
                     : c.bug == Bug::MaskFiniteFill || c.bug == Bug::MaskInvertedFiniteFill
                         ? "masked_fill(-1e9)"
                                                    : "masked_fill(-inf)";
    t.add(with_counts(made_step("scores_masked", op, {"scores_scaled", "mask"}, StepKind::Compute, sm.masked, bn),
                      sm.counted, sm.masked_counts));
    softmax_input = "scores_masked";
  } else {
    t.add(skipped_step("mask", "build mask", {}, "no mask"));
    t.add(skipped_step("scores_masked", "masked_fill(-inf)", {"scores_scaled", "mask"}, "no mask"));
  }
  const char* softmax_op = spec.axis == -2 ? "softmax(dim=-2) (wrong-axis bug)"
                           : spec.fp16_no_max ? "softmax fp16 without max (bug)"
                                              : "softmax(dim=-1)";
  t.add(with_counts(made_step("alpha", softmax_op, {softmax_input}, StepKind::Compute, sm.alpha, bn), sm.counted,
                    sm.alpha_counts));

  // dropout                                               (B,h,Tq,Tk)
  const char* ctx_input = "alpha";
  if (dropout_p > 0) {
    t.add(made_step("alpha_dropped", "dropout", {"alpha"}, StepKind::Compute, core.dropped, bn));
    ctx_input = "alpha_dropped";
  } else {
    t.add(skipped_step("alpha_dropped", "dropout", {"alpha"},
                       c.train ? "dropout p = 0" : "eval mode: dropout is the identity"));
  }

  // per-head context, then heads back next to each other  (B,h,Tq,dk) -> (B,Tq,h,dk)
  Tensor ctx_heads = core.ctx;  // head patches (the model's ablations) edit it in place
  Step ctx_step = made_step("ctx_heads", "matmul alpha·v", {ctx_input, kv.v_name}, StepKind::Compute, ctx_heads, bn);
  if (!in.head_patches.empty()) ctx_step.note = apply_head_patches(ctx_heads, in.head_patches);
  t.add(std::move(ctx_step));
  if (c.bug == Bug::ViewWithoutContiguous) {  // the real error, from the real view()
    const Tensor ctx_transposed = ctx_heads.transpose(1, 2);  // (B,Tq,h,dk) view
    t.add(made_step("ctx_transposed", "transpose(1,2)", {"ctx_heads"}, StepKind::View, ctx_transposed, bn));
    t.add(skipped_step("ctx_contiguous", "contiguous()", {"ctx_transposed"},
                       "left out by the view-without-contiguous bug"));
    try {
      (void)ctx_transposed.view({B, Tq, d});
    } catch (const Error& e) {
      result.error = e.what();
    }
    t.add(skipped_step("ctx_concat", "view", {"ctx_transposed"}, result.error));
    t.add(skipped_step("out", "linear W_O", {"ctx_concat"}, "not reached: ctx_concat failed"));
    return result;
  }

  add_merge_steps(t, c, w, ctx_heads, be);
  return result;
}

}  // namespace attnsim
