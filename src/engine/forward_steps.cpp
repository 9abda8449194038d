#include "forward_steps.h"

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

Heads add_head_steps(Trace& t, const MhaConfig& c, const MhaWeights& w, const MhaInputs& in, Backend& be) {
  const int64_t B = c.batch, Tq = c.tq, Tk = c.tk, h = c.heads, dk = c.head_dim();
  const std::string bn = be.name();

  // inputs                                                (B,Tq,d) (B,Tk,d) (B,Tk,d)
  t.add(input_step("query", in.query));
  t.add(input_step("key", in.key));
  t.add(input_step("value", in.value));

  // projections: x·Wᵀ + b                                 (B,T,d), new storage each
  const Tensor q_proj = be.linear(in.query, w.W_Q.weight, w.W_Q.bias);
  const Tensor k_proj = be.linear(in.key, w.W_K.weight, w.W_K.bias);
  const Tensor v_proj = be.linear(in.value, w.W_V.weight, w.W_V.bias);
  t.add(made_step("q_proj", "linear W_Q", {"query"}, StepKind::Compute, q_proj, bn));
  t.add(made_step("k_proj", "linear W_K", {"key"}, StepKind::Compute, k_proj, bn));
  t.add(made_step("v_proj", "linear W_V", {"value"}, StepKind::Compute, v_proj, bn));

  // split the d axis into heads                           (B,T,h,dk)       view
  const Tensor q_view = q_proj.view({B, Tq, h, dk});
  const Tensor k_view = k_proj.view({B, Tk, h, dk});
  const Tensor v_view = v_proj.view({B, Tk, h, dk});
  t.add(made_step("q_view", "view", {"q_proj"}, StepKind::View, q_view, bn));
  t.add(made_step("k_view", "view", {"k_proj"}, StepKind::View, k_view, bn));
  t.add(made_step("v_view", "view", {"v_proj"}, StepKind::View, v_view, bn));

  // heads first                                           (B,h,T,dk)       view, not contiguous
  Heads heads{q_view.transpose(1, 2), k_view.transpose(1, 2), v_view.transpose(1, 2)};
  t.add(made_step("q_heads", "transpose(1,2)", {"q_view"}, StepKind::View, heads.q, bn));
  t.add(made_step("k_heads", "transpose(1,2)", {"k_view"}, StepKind::View, heads.k, bn));
  t.add(made_step("v_heads", "transpose(1,2)", {"v_view"}, StepKind::View, heads.v, bn));
  return heads;
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
    const Tensor out = be.linear(ctx_concat, w.W_O.weight, w.W_O.bias);
    t.add(made_step("out", "linear W_O", {"ctx_concat"}, StepKind::Compute, out, bn));
  }
}

}  // namespace attnsim
