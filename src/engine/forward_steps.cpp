#include "forward_steps.h"

#include <cstdio>

namespace attnsim {

Step input_step(const char* name, const Tensor& t) {
  Step s;
  s.name = name;
  s.op = "input";
  s.kind = StepKind::Input;
  s.out = t;
  return s;
}

Step made_step(const char* name, const std::string& op, std::vector<std::string> inputs, StepKind kind,
               const Tensor& t, const std::string& backend) {
  Step s;
  s.name = name;
  s.op = op;
  s.inputs = std::move(inputs);
  s.kind = kind;
  s.out = t;
  if (kind != StepKind::View) s.backend = backend;
  return s;
}

Step skipped_step(const char* name, const std::string& op, std::vector<std::string> inputs, std::string why) {
  Step s;
  s.name = name;
  s.op = op;
  s.inputs = std::move(inputs);
  s.kind = StepKind::Skipped;
  s.note = std::move(why);
  return s;
}

namespace {

constexpr const char* kHeadSteps[] = {"query",  "key",    "value",   "q_proj",  "k_proj",  "v_proj",
                                      "q_view", "k_view", "v_view",  "q_heads", "k_heads", "v_heads"};

std::vector<Tensor> projection_weights(const MhaWeights& w) {
  return {w.W_Q.weight, w.W_Q.bias, w.W_K.weight, w.W_K.bias, w.W_V.weight, w.W_V.bias};
}

// Whether `earlier`'s head steps are what this pass would compute: the same input and weight
// tensors, the same head shapes (B,h,Tq,dk) and (B,g,Tk,dk), the same backend.
bool can_reuse(const Trace& earlier, const MhaConfig& c, const MhaWeights& w, const MhaInputs& in,
               const std::string& backend) {
  const std::vector<Tensor> weights = projection_weights(w);
  if (earlier.projection_weights.size() != weights.size()) return false;
  for (size_t i = 0; i < weights.size(); ++i)
    if (!earlier.projection_weights[i].same_view_as(weights[i])) return false;
  for (const char* name : kHeadSteps)
    if (!earlier.find(name)) return false;
  const Step& q_proj = earlier.at("q_proj");
  return earlier.at("query").out.same_view_as(in.query) && earlier.at("key").out.same_view_as(in.key) &&
         earlier.at("value").out.same_view_as(in.value) && q_proj.backend == backend &&
         earlier.at("q_heads").out.shape() == Dims{c.batch, c.heads, c.tq, c.head_dim()} &&
         earlier.at("k_heads").out.shape() == Dims{c.batch, c.kv_group_count(), c.tk, c.head_dim()};
}

}  // namespace

// q_rot, k_rot after the head split: rotated copies at positions p0.. (rope.h), or skipped.
static Heads add_rope_steps(Trace& t, const MhaConfig& c, Heads heads, Backend& be) {
  if (c.rope_theta <= 0) {
    for (auto [name, from] : {std::pair{"q_rot", "q_heads"}, {"k_rot", "k_heads"}})
      t.add(skipped_step(name, "rope", {from}, "no rotary embedding"));
    return heads;
  }
  char op[96];
  std::snprintf(op, sizeof op, "rope θ=%g%s at positions %lld..%lld", c.rope_theta,
                c.rope_scaling.factor > 0 ? " (llama3-scaled)" : "", static_cast<long long>(c.position0),
                static_cast<long long>(c.position0 + heads.q.size(2) - 1));
  heads.q = be.rope(heads.q, c.position0, c.rope_theta, c.rope_scaling);  // (B,h,Tq,dk)
  heads.k = be.rope(heads.k, c.position0, c.rope_theta, c.rope_scaling);  // (B,g,Tk,dk)
  Step q = made_step("q_rot", op, {"q_heads"}, StepKind::Compute, heads.q, be.name());
  Step k = made_step("k_rot", op, {"k_heads"}, StepKind::Compute, heads.k, be.name());
  q.note = k.note = "pairs (i, i + dk/2) turned by position · θ^(-2i/dk) (HF rotate_half)";
  t.add(std::move(q));
  t.add(std::move(k));
  heads.q_name = "q_rot";
  heads.k_name = "k_rot";
  return heads;
}

const Tensor& core_q(const Trace& t) {
  const Step* rot = t.find("q_rot");
  return rot && !rot->skipped() ? rot->out : t.at("q_heads").out;
}

const Tensor& core_k(const Trace& t) {
  const Step* rot = t.find("k_rot");
  return rot && !rot->skipped() ? rot->out : t.at("k_heads").out;
}

Heads add_head_steps(Trace& t, const MhaConfig& c, const MhaWeights& w, const MhaInputs& in, Backend& be,
                     const Trace* earlier) {
  const int64_t B = c.batch, Tq = c.tq, Tk = c.tk, h = c.heads, g = c.kv_group_count(), dk = c.head_dim();
  const std::string bn = be.name();
  t.projection_weights = projection_weights(w);
  if (earlier && can_reuse(*earlier, c, w, in, bn)) {
    for (const char* name : kHeadSteps) {
      Step s = earlier->at(name);
      s.counts_known = true;  // counted when first made; Trace::add numbers the storages again
      s.storage_id = 0;
      s.new_bytes = 0;
      t.add(std::move(s));
    }
    t.reused_head_steps = true;
    return add_rope_steps(t, c, {t.at("q_heads").out, t.at("k_heads").out, t.at("v_heads").out}, be);
  }

  // inputs                                                (B,Tq,d) (B,Tk,d) (B,Tk,d)
  t.add(input_step("query", in.query));
  t.add(input_step("key", in.key));
  t.add(input_step("value", in.value));

  // projections: x·Wᵀ + b                                 (B,Tq,d) (B,Tk,g·dk) (B,Tk,g·dk)
  const Tensor q_proj = be.linear(in.query, w.W_Q);
  const Tensor k_proj = be.linear(in.key, w.W_K);
  const Tensor v_proj = be.linear(in.value, w.W_V);
  t.add(made_step("q_proj", "linear W_Q", {"query"}, StepKind::Compute, q_proj, bn));
  t.add(made_step("k_proj", "linear W_K", {"key"}, StepKind::Compute, k_proj, bn));
  t.add(made_step("v_proj", "linear W_V", {"value"}, StepKind::Compute, v_proj, bn));

  // split the d axis into heads                           (B,Tq,h,dk) (B,Tk,g,dk)  view
  const Tensor q_view = q_proj.view({B, Tq, h, dk});
  const Tensor k_view = k_proj.view({B, Tk, g, dk});
  const Tensor v_view = v_proj.view({B, Tk, g, dk});
  t.add(made_step("q_view", "view", {"q_proj"}, StepKind::View, q_view, bn));
  t.add(made_step("k_view", "view", {"k_proj"}, StepKind::View, k_view, bn));
  t.add(made_step("v_view", "view", {"v_proj"}, StepKind::View, v_view, bn));

  // heads first                                           (B,h,Tq,dk) (B,g,Tk,dk)  view, not contiguous
  Heads heads{q_view.transpose(1, 2), k_view.transpose(1, 2), v_view.transpose(1, 2)};
  t.add(made_step("q_heads", "transpose(1,2)", {"q_view"}, StepKind::View, heads.q, bn));
  t.add(made_step("k_heads", "transpose(1,2)", {"k_view"}, StepKind::View, heads.k, bn));
  t.add(made_step("v_heads", "transpose(1,2)", {"v_view"}, StepKind::View, heads.v, bn));
  return add_rope_steps(t, c, heads, be);
}

KvRead add_group_steps(Trace& t, const MhaConfig& c, const Tensor& k, const Tensor& v, const char* k_from,
                       const char* v_from, Backend& be) {
  KvRead read{k, v, k_from, v_from};
  if (!c.grouped()) return read;
  const int64_t B = k.size(0), g = k.size(1), Tk = k.size(2), dk = k.size(3), r = c.heads / g;
  const std::string bn = be.name();
  auto group = [&](const char* name, const Tensor& x, const char* from) {
    Step s;
    if (c.kv_repeat_copy) {  // what common code does: x.repeat_interleave(r, dim=1), (B,h,Tk,dk)
      const Tensor copy = be.contiguous(x.unsqueeze(2).expand({B, g, r, Tk, dk})).view({B, g * r, Tk, dk});
      s = made_step(name, "repeat_interleave(" + std::to_string(r) + ", dim=1)", {from}, StepKind::Copy, copy, bn);
      s.note = "each K/V head copied for the " + std::to_string(r) + " query heads of its group";
    } else {  // (B,g,r,Tk,dk): the r query heads of group j all read head j, stride 0
      s = made_step(name, "unsqueeze(2).expand(B,g," + std::to_string(r) + ",T,dk)", {from}, StepKind::View,
                    x.unsqueeze(2).expand({B, g, r, Tk, dk}), bn);
      s.note = "stride 0 on the group axis: " + std::to_string(r) + " query heads read one K/V head, no copy";
    }
    if (const Step* src = t.find(from)) {  // r reads of every element of x
      s.counts_known = true;
      s.nan_count = src->nan_count * r;
      s.neginf_count = src->neginf_count * r;
      s.posinf_count = src->posinf_count * r;
    }
    t.add(std::move(s));
    return t.steps.back().out;
  };
  read.k = group("k_grouped", k, k_from);
  read.v = group("v_grouped", v, v_from);
  read.k_name = "k_grouped";
  read.v_name = "v_grouped";
  return read;
}

Tensor core_qk(Backend& be, const Tensor& q, const Tensor& k) {
  return k.dim() == 5 ? be.qk_grouped(q, k) : be.qk(q, k);
}

Tensor core_av(Backend& be, const Tensor& alpha, const Tensor& v) {
  return v.dim() == 5 ? be.av_grouped(alpha, v) : be.av(alpha, v);
}

void add_merge_steps(Trace& t, const MhaConfig& c, const MhaWeights& w, const Tensor& ctx_heads, Backend& be) {
  const std::string bn = be.name();
  // heads back next to each other                         (B,Tq,h,dk)      view, not contiguous
  const Tensor ctx_transposed = ctx_heads.transpose(1, 2);
  t.add(made_step("ctx_transposed", "transpose(1,2)", {"ctx_heads"}, StepKind::View, ctx_transposed, bn));
  // the one copy of the pass, then the concat view        (B,Tq,h,dk) -> (B,Tq,d)
  const Tensor ctx_contiguous = be.contiguous(ctx_transposed);
  t.add(made_step("ctx_contiguous", "contiguous()", {"ctx_transposed"}, StepKind::Copy, ctx_contiguous, bn));
  const Tensor ctx_concat = ctx_contiguous.view({c.batch, c.tq, c.d_model});
  t.add(made_step("ctx_concat", "view", {"ctx_contiguous"}, StepKind::View, ctx_concat, bn));
  // output projection                                     (B,Tq,d)
  if (c.wo_identity) {
    t.add(made_step("out", "identity (W_O = I)", {"ctx_concat"}, StepKind::View, ctx_concat, bn));
  } else {
    const Tensor out = be.linear(ctx_concat, w.W_O);
    t.add(made_step("out", "linear W_O", {"ctx_concat"}, StepKind::Compute, out, bn));
  }
}

}  // namespace attnsim
