#include "whole_pass.h"

#include <algorithm>
#include <cstring>

#include "engine/checked.h"
#include "engine/error.h"
#include "engine/forward_steps.h"

namespace attnsim::model {

// [SECTION] the list

std::string skip_reason(const PassModel& m, const std::string& s) {
  const bool mlp_step = s.rfind("mlp_", 0) == 0 || s == "resid_mlp" || s == "norm_mlp";
  if (s == "pos_embed" && !m.pos_embed.defined()) return "RoPE: positions turn q and k (q_rot, k_rot)";
  if (mlp_step && m.mlp == MlpKind::None) return "no MLP in this model";
  if (s == "mlp_gate" && m.mlp != MlpKind::SwiGlu) return "GELU MLP: no gate";
  if ((s == "norm_attn" || s == "norm_mlp" || s == "norm_final") && m.norm == NormKind::None) return "no norms in this model";
  return "";
}

std::vector<std::string> whole_step_paths(const PassModel& m, int64_t T) {
  std::vector<std::string> out(kEmbedSteps.begin(), kEmbedSteps.end());
  const MhaConfig a = m.attention(T);
  for (int64_t l = 0; l < m.layers; ++l) {
    const std::string p = "layer_" + std::to_string(l) + "/";
    out.push_back(p + kBlockSteps[0]);
    for (const std::string& s : trace_step_names(a.grouped(), false)) out.push_back(p + s);
    for (size_t i = 1; i < kBlockSteps.size(); ++i) out.push_back(p + kBlockSteps[i]);
  }
  out.insert(out.end(), kHeadSteps.begin(), kHeadSteps.end());
  return out;
}

void check_token_ids(const std::vector<int32_t>& tokens, int64_t vocab, int64_t max_positions) {
  if (tokens.empty()) throw Error("no tokens to run the model on");
  if (static_cast<int64_t>(tokens.size()) > max_positions)
    throw Error(std::to_string(tokens.size()) + " tokens is longer than the model's " + std::to_string(max_positions) +
                " positions");
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab)
      throw Error("token " + std::to_string(i) + " is id " + std::to_string(tokens[i]) + ", outside the vocabulary (0.." +
                  std::to_string(vocab - 1) + ")");
}

int64_t predict_whole_bytes(const PassSizes& m, const MhaConfig& a) {
  const int64_t T = a.tq;
  const Size f = 4, Td = Size(T) * m.d_model * f, Tff = Size(T) * m.d_ff * f, TV = Size(T) * m.vocab * f;
  // tok_embed pos_embed embed norm_final; logits probs; top_k top_p (V) and the sampler's
  // doubles and ranking (V each)
  const Size head = Td * 4 + TV * 2 + Size(m.vocab) * 4 * 2 + Size(m.vocab) * 8 * 2;
  // norm_attn resid_attn norm_mlp mlp_down resid_mlp; mlp_gate mlp_up mlp_act; the attention trace
  const Size block = Td * 5 + Tff * 3 + Size(predict_trace_bytes(a));
  return (head + block * m.layers).value();
}

// [SECTION] the pass

namespace {

Step computed(const std::string& name, const std::string& op, std::vector<std::string> inputs, const Tensor& out) {
  return made_step(name.c_str(), op, std::move(inputs), StepKind::Compute, out, "cpu");
}

Step skipped(const PassModel& m, const std::string& name) { return skipped_step(name.c_str(), "", {}, skip_reason(m, name)); }

// a + b, both (1,T,d) contiguous: a new tensor (the stream before stays a step of its own)
Tensor sum(const Tensor& a, const Tensor& b) {
  Tensor y = Tensor::empty(a.shape());
  const float *p = a.f32(), *q = b.f32();
  float* o = y.f32();
  for (int64_t i = 0, n = a.numel(); i < n; ++i) o[i] = p[i] + q[i];
  return y;
}

// rows of table (R,d) picked by ids   (1,n,d)
Tensor gather(const Tensor& table, const std::vector<int32_t>& ids) {
  const int64_t n = static_cast<int64_t>(ids.size()), d = table.size(1);
  Tensor y = Tensor::empty({1, n, d});
  for (int64_t t = 0; t < n; ++t) std::memcpy(y.f32() + t * d, table.f32() + ids[t] * d, sizeof(float) * d);
  return y;
}

std::string norm_op(const PassModel& m) {
  return (m.norm == NormKind::LayerNorm ? "LayerNorm (eps " : "RMSNorm (eps ") + std::to_string(m.norm_eps) + ")";
}

// the block's steps after attention: resid_attn, norm_mlp, the MLP, resid_mlp; returns the stream
Tensor mlp_steps(const PassModel& m, const BlockWeights& B, const Tensor& x, Trace& t, Backend& be) {
  if (m.mlp == MlpKind::None) {
    for (size_t i = 2; i < kBlockSteps.size(); ++i) t.add(skipped(m, kBlockSteps[i]));
    return x;
  }
  Tensor h = x;  // (1,T,d) the MLP's input
  if (m.norm == NormKind::None) t.add(skipped(m, "norm_mlp"));
  else t.add(computed("norm_mlp", norm_op(m), {"resid_attn"}, h = apply_norm(m.norm, x, B.norm2_w, B.norm2_b, m.norm_eps)));
  const std::string in = m.norm == NormKind::None ? "resid_attn" : "norm_mlp";
  Tensor act;  // (1,T,ff)
  if (m.mlp == MlpKind::SwiGlu) {
    const Tensor gate = be.linear(h, B.gate);  // (1,T,ff)
    const Tensor up = be.linear(h, B.up);      // (1,T,ff)
    t.add(computed("mlp_gate", "linear W_gate", {in}, gate));
    t.add(computed("mlp_up", "linear W_up", {in}, up));
    act = gate.clone();  // copies: gate stays a step
    activate(Activation::Silu, act.f32(), act.numel());
    float* pa = act.f32();
    const float* pu = up.f32();
    for (int64_t i = 0, n = act.numel(); i < n; ++i) pa[i] *= pu[i];
    t.add(computed("mlp_act", "silu(mlp_gate) ⊙ mlp_up", {"mlp_gate", "mlp_up"}, act));
  } else {
    t.add(skipped(m, "mlp_gate"));
    const Tensor up = be.linear(h, B.up);  // (1,T,ff)
    t.add(computed("mlp_up", "linear W_up", {in}, up));
    act = up.clone();
    activate(m.act, act.f32(), act.numel());
    t.add(computed("mlp_act", m.act == Activation::GeluTanh ? "gelu_new (tanh)" : "gelu (erf)", {"mlp_up"}, act));
  }
  const Tensor down = be.linear(act, B.down);  // (1,T,d)
  t.add(computed("mlp_down", "linear W_down", {"mlp_act"}, down));
  Tensor y = sum(x, down);
  t.add(computed("resid_mlp", "resid_attn + mlp_down", {"resid_attn", "mlp_down"}, y));
  return y;
}

void refuse_nonfinite(const Trace& t, const std::string& where) {
  if (const std::string bad = t.first_nonfinite_step(); !bad.empty())
    throw Error("the forward pass overflowed float32: first non-finite tensor: " + where + bad);
}

}  // namespace

WholeTrace whole_forward(const PassModel& m, const std::vector<int32_t>& tokens, const SamplingOptions& sampling) {
  check_token_ids(tokens, m.vocab, m.max_positions);
  validate_sampling(sampling, m.vocab);
  const int64_t T = static_cast<int64_t>(tokens.size());
  Backend& be = cpu_backend();
  WholeTrace w;
  w.attention = m.attention(T);

  // [1] the embeddings: the residual stream's start   (1,T,d)
  const Tensor tok = gather(m.embed, tokens);
  w.model.add(computed("tok_embed", "embed[tokens]", {}, tok));
  Tensor x = tok;
  if (m.pos_embed.defined()) {
    std::vector<int32_t> positions(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) positions[t] = static_cast<int32_t>(t);
    const Tensor pos = gather(m.pos_embed, positions);
    w.model.add(computed("pos_embed", "pos_embed[0..T)", {}, pos));
    x = sum(tok, pos);
    w.model.add(computed("embed", "tok_embed + pos_embed", {"tok_embed", "pos_embed"}, x));
  } else {
    w.model.add(skipped(m, "pos_embed"));
    w.model.add(made_step("embed", "= tok_embed (positions come in attention)", {"tok_embed"}, StepKind::View, tok, ""));
  }
  refuse_nonfinite(w.model, "");

  // [2] the blocks: norm, the engine's attention, residual, norm, MLP, residual
  std::string stream = "embed";
  for (int64_t l = 0; l < m.layers; ++l) {
    const BlockWeights B = m.block(l);
    Trace t;
    Tensor h = x;  // (1,T,d) attention's input
    if (m.norm == NormKind::None) t.add(skipped(m, "norm_attn"));
    else t.add(computed("norm_attn", norm_op(m), {stream}, h = apply_norm(m.norm, x, B.norm1_w, B.norm1_b, m.norm_eps)));
    MhaInputs in;
    in.query = in.key = in.value = h;
    ForwardResult f = forward(w.attention, B.attn, in, be);
    if (!f.error.empty()) throw Error(f.error);
    for (Step& s : f.trace.steps) {
      s.counts_known = true;  // the engine counted them: splice, do not count again
      t.add(std::move(s));
    }
    x = sum(x, t.at("out").out);
    t.add(computed("resid_attn", stream + " + out", {stream, "out"}, x));
    x = mlp_steps(m, B, x, t, be);
    refuse_nonfinite(t, "layer_" + std::to_string(l) + "/");
    stream = "layer_" + std::to_string(l) + (m.mlp == MlpKind::None ? "/resid_attn" : "/resid_mlp");
    w.blocks.push_back(std::move(t));
  }

  // [3] the final norm, the logits, the sampling steps
  Tensor h = x;
  if (m.norm == NormKind::None) w.model.add(skipped(m, "norm_final"));
  else w.model.add(computed("norm_final", norm_op(m), {stream}, h = apply_norm(m.norm, x, m.norm_f_w, m.norm_f_b, m.norm_eps)));
  const Tensor logits = be.linear(h, Linear{m.unembed, m.unembed_bias, m.unembed_packed});  // (1,T,V)
  w.model.add(computed("logits", m.unembed_bias.defined() ? "linear unembed (+ bias)" : "linear unembed",
                       {m.norm == NormKind::None ? stream : "norm_final"}, logits));
  refuse_nonfinite(w.model, "");
  for (Step& s : sampling_trace(logits, sampling).steps) {
    s.counts_known = true;
    w.model.add(std::move(s));
  }
  return w;
}

}  // namespace attnsim::model
