#include "model/pass/whole_pass.h"

#include <algorithm>
#include <cstring>

#include "engine/checked.h"
#include "engine/decode.h"
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

namespace {

// tokens as `batch` rows of T, each at positions past..past+T-1
int64_t check_rows(const std::vector<int32_t>& tokens, int64_t batch, int64_t past, int64_t vocab, int64_t max_positions) {
  if (tokens.empty()) throw Error("no tokens to run the model on");
  if (batch < 1 || static_cast<int64_t>(tokens.size()) % batch != 0)
    throw Error(std::to_string(tokens.size()) + " tokens do not make " + std::to_string(batch) + " sequences of one length");
  const int64_t T = static_cast<int64_t>(tokens.size()) / batch;
  if (past + T > max_positions)
    throw Error(std::to_string(past + T) + " tokens is longer than the model's " + std::to_string(max_positions) +
                " positions");
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab)
      throw Error("token " + std::to_string(i) + " is id " + std::to_string(tokens[i]) + ", outside the vocabulary (0.." +
                  std::to_string(vocab - 1) + ")");
  return T;
}

}  // namespace

const char* block_output_step(const PassModel& m) { return m.mlp == MlpKind::None ? "resid_attn" : "resid_mlp"; }

std::string stream_after(const PassModel& m, int64_t l) {
  return l < 0 ? "embed" : "layer_" + std::to_string(l) + "/" + block_output_step(m);
}

Trace attention_steps_of(Trace&& block) {
  Trace t;
  bool inside = false;
  for (Step& s : block.steps) {
    inside = inside || s.name == "query";
    if (!inside) continue;
    const bool last = s.name == "out";
    t.add(std::move(s));
    if (last) break;
  }
  return t;
}

void check_token_ids(const std::vector<int32_t>& tokens, int64_t vocab, int64_t max_positions) {
  check_rows(tokens, 1, 0, vocab, max_positions);
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

// A step whose op counted its NaN / ±inf as it wrote it (the trace does not read it again).
Step counted(const std::string& name, const std::string& op, std::vector<std::string> inputs, const Tensor& out,
             const NonFinite& c) {
  Step s = computed(name, op, std::move(inputs), out);
  s.counts_known = true;
  s.nan_count = c.nan, s.neginf_count = c.neginf, s.posinf_count = c.posinf;
  return s;
}

Step skipped(const PassModel& m, const std::string& name) { return skipped_step(name.c_str(), "", {}, skip_reason(m, name)); }

// Elementwise ops run over chunks that stay in L1, so counting what they read and wrote
// costs no second trip to memory.
constexpr int64_t kChunk = 4096;

// a + b, both (B,T,d) contiguous, or b (1,T,d) added to every sequence: a new tensor (the
// stream before stays a step of its own). Counts y's non-finite values, and b's when given.
Tensor sum(const Tensor& a, const Tensor& b, NonFinite& cy, NonFinite* cb = nullptr) {
  Tensor y = Tensor::empty(a.shape());
  const float *p = a.f32(), *q = b.f32();
  float* o = y.f32();
  const int64_t n = a.numel(), nb = b.numel();
  for (int64_t at = 0; at < n; at += nb)  // b once per sequence
    for (int64_t first = 0; first < nb; first += kChunk) {
      const int64_t m = std::min(kChunk, nb - first);
      for (int64_t i = first; i < first + m; ++i) o[at + i] = p[at + i] + q[i];  // a plain loop that vectorises
      count_nonfinite_into(o + at + first, m, cy);
      if (cb && at == 0) count_nonfinite_into(q + first, m, *cb);  // b once
    }
  return y;
}

// rows of table (R,d) picked by ids, as `rows` sequences   (rows,n/rows,d)
Tensor gather(const Tensor& table, const std::vector<int32_t>& ids, int64_t rows) {
  const int64_t n = static_cast<int64_t>(ids.size()), d = table.size(1);
  Tensor y = Tensor::empty({rows, n / rows, d});
  for (int64_t t = 0; t < n; ++t) std::memcpy(y.f32() + t * d, table.f32() + ids[t] * d, sizeof(float) * d);
  return y;
}

std::string norm_op(const PassModel& m) {
  return (m.norm == NormKind::LayerNorm ? "LayerNorm (eps " : "RMSNorm (eps ") + std::to_string(m.norm_eps) + ")";
}

// the block's steps after attention: resid_attn, norm_mlp, the MLP, resid_mlp; returns the stream.
// A block whose steps are not kept computes its activation in place, over mlp_up (mlp_gate
// under SwiGLU): one (B,T,ff) buffer instead of two, which stays in cache (2 % of GPT-2's pass).
Tensor mlp_steps(const PassModel& m, const BlockWeights& B, const Tensor& x, Trace& t, Backend& be, NormStats* stats,
                 bool kept) {
  if (m.mlp == MlpKind::None) {
    for (size_t i = 2; i < kBlockSteps.size(); ++i) t.add(skipped(m, kBlockSteps[i]));
    return x;
  }
  Tensor h = x;  // (B,T,d) the MLP's input
  if (m.norm == NormKind::None) t.add(skipped(m, "norm_mlp"));
  else t.add(computed("norm_mlp", norm_op(m), {"resid_attn"}, h = apply_norm(m.norm, x, B.norm2_w, B.norm2_b, m.norm_eps, stats)));
  const std::string in = m.norm == NormKind::None ? "resid_attn" : "norm_mlp";
  Tensor act;  // (B,T,ff)
  NonFinite c_gate, c_up, c_act;  // counted chunk by chunk as the activation reads and writes them
  if (m.mlp == MlpKind::SwiGlu) {
    const Tensor gate = be.linear(h, B.gate);  // (B,T,ff)
    const Tensor up = be.linear(h, B.up);      // (B,T,ff)
    act = kept ? Tensor::empty(gate.shape()) : gate;  // gate stays a step where the block is kept
    const float *pg = gate.f32(), *pu = up.f32();
    float* pa = act.f32();
    for (int64_t first = 0, n = act.numel(); first < n; first += kChunk) {
      const int64_t len = std::min(kChunk, n - first);
      count_nonfinite_into(pg + first, len, c_gate), count_nonfinite_into(pu + first, len, c_up);  // before pa overwrites pg
      activate(Activation::Silu, pg + first, len, pa + first);
      for (int64_t i = first; i < first + len; ++i) pa[i] *= pu[i];
      count_nonfinite_into(pa + first, len, c_act);
    }
    t.add(counted("mlp_gate", "linear W_gate", {in}, gate, c_gate));
    t.add(counted("mlp_up", "linear W_up", {in}, up, c_up));
    t.add(counted("mlp_act", "silu(mlp_gate) ⊙ mlp_up", {"mlp_gate", "mlp_up"}, act, c_act));
  } else {
    t.add(skipped(m, "mlp_gate"));
    const Tensor up = be.linear(h, B.up);  // (B,T,ff)
    act = kept ? Tensor::empty(up.shape()) : up;
    const float* pu = up.f32();
    float* pa = act.f32();
    for (int64_t first = 0, n = act.numel(); first < n; first += kChunk) {
      const int64_t len = std::min(kChunk, n - first);
      count_nonfinite_into(pu + first, len, c_up);  // before pa overwrites pu
      activate(m.act, pu + first, len, pa + first);
      count_nonfinite_into(pa + first, len, c_act);
    }
    t.add(counted("mlp_up", "linear W_up", {in}, up, c_up));
    t.add(counted("mlp_act", m.act == Activation::GeluTanh ? "gelu_new (tanh)" : "gelu (erf)", {"mlp_up"}, act, c_act));
  }
  const Tensor down = be.linear(act, B.down);  // (B,T,d)
  NonFinite c_down, c_y;
  Tensor y = sum(x, down, c_y, &c_down);
  t.add(counted("mlp_down", "linear W_down", {"mlp_act"}, down, c_down));
  t.add(counted("resid_mlp", "resid_attn + mlp_down", {"resid_attn", "mlp_down"}, y, c_y));
  return y;
}

void refuse_nonfinite(const Trace& t, const std::string& where) {
  if (const std::string bad = t.first_nonfinite_step(); !bad.empty())
    throw Error("the forward pass overflowed float32: first non-finite tensor: " + where + bad +
                " (weights or inputs too large; a model whose training diverged)");
}

// Block l's attention: the engine's forward, or over layer l's cache when decoding
Trace attention_steps(const MhaConfig& a, const BlockWeights& B, const Tensor& h, int64_t l, const PassOptions& o,
                      Backend& be) {
  if (o.caches) return attend_cached(a, B.attn, (*o.caches)[static_cast<size_t>(l)], h, be);
  MhaInputs in;
  in.query = in.key = in.value = h;
  if (static_cast<size_t>(l) < o.patches.size()) in.head_patches = o.patches[static_cast<size_t>(l)];
  ForwardResult f = forward(a, B.attn, in, be);
  if (!f.error.empty()) throw Error(f.error);
  return std::move(f.trace);
}

// What a block keeps when it is not the one asked for: what the evaluations read
Trace thinned(Trace&& t) {
  Trace kept;
  for (Step& s : t.steps)
    if (s.name == "alpha" || s.name == "ctx_heads") kept.add(std::move(s));
  return kept;
}

}  // namespace

Tensor block_forward(const PassModel& m, const BlockWeights& B, const Tensor& x, const std::string& stream,
                     const std::function<Trace(const Tensor&)>& attend, Trace& t, NormStats* norm_attn,
                     NormStats* norm_mlp, bool kept) {
  Tensor h = x;  // (B,T,d) attention's input
  if (m.norm == NormKind::None) t.add(skipped(m, "norm_attn"));
  else t.add(computed("norm_attn", norm_op(m), {stream}, h = apply_norm(m.norm, x, B.norm1_w, B.norm1_b, m.norm_eps, norm_attn)));
  for (Step& s : attend(h).steps) {
    s.counts_known = true;  // the engine counted them: splice, do not count again
    t.add(std::move(s));
  }
  NonFinite c;
  const Tensor y = sum(x, t.at("out").out, c);
  t.add(counted("resid_attn", stream + " + out", {stream, "out"}, y, c));
  return mlp_steps(m, B, y, t, cpu_backend(), norm_mlp, kept);
}

Tensor final_norm(const PassModel& m, const Tensor& x, const std::string& stream, Trace& t, NormStats* stats) {
  if (m.norm == NormKind::None) {
    t.add(skipped(m, "norm_final"));
    return x;
  }
  Tensor h = apply_norm(m.norm, x, m.norm_f_w, m.norm_f_b, m.norm_eps, stats);
  t.add(computed("norm_final", norm_op(m), {stream}, h));
  return h;
}

WholeTrace whole_forward(const PassModel& m, const std::vector<int32_t>& tokens, const SamplingOptions& sampling,
                         const PassOptions& o) {
  const int64_t past = o.caches && !o.caches->empty() ? o.caches->front().length() : 0;
  if (o.caches && static_cast<int64_t>(o.caches->size()) != m.layers)
    throw Error("decode needs one KV cache per layer: " + std::to_string(o.caches->size()) + " for " +
                std::to_string(m.layers) + " layers");
  const int64_t T = check_rows(tokens, o.batch, past, m.vocab, m.max_positions);
  if (o.caches && past + T > o.caches->front().t_max())
    throw Error("decode past the cache: " + std::to_string(past + T) + " positions, T_max " +
                std::to_string(o.caches->front().t_max()));
  const bool sample = o.sample && o.batch == 1;
  if (sample) validate_sampling(sampling, m.vocab);
  Backend& be = cpu_backend();
  WholeTrace w;
  w.model.count = o.refuse_nonfinite || sample;  // the trainer reads no counts: its (B,T,V) logits go uncounted
  w.attention = m.attention(T);
  w.attention.batch = o.batch;
  w.attention.position0 = past;

  // [1] the embeddings: the residual stream's start   (B,T,d)
  const Tensor tok = gather(m.embed, tokens, o.batch);
  w.model.add(computed("tok_embed", "embed[tokens]", {}, tok));
  Tensor x = tok;
  if (m.pos_embed.defined()) {
    std::vector<int32_t> positions(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) positions[t] = static_cast<int32_t>(past + t);
    const Tensor pos = gather(m.pos_embed, positions, 1);  // (1,T,d), the same for every sequence
    w.model.add(computed("pos_embed", past ? "pos_embed[past..past+T)" : "pos_embed[0..T)", {}, pos));
    NonFinite c;
    x = sum(tok, pos, c);
    w.model.add(counted("embed", "tok_embed + pos_embed", {"tok_embed", "pos_embed"}, x, c));
  } else {
    w.model.add(skipped(m, "pos_embed"));
    w.model.add(made_step("embed", "= tok_embed (positions come in attention)", {"tok_embed"}, StepKind::View, tok, ""));
  }
  if (o.refuse_nonfinite) refuse_nonfinite(w.model, "");

  // [2] the blocks: norm, the engine's attention, residual, norm, MLP, residual
  std::string stream = stream_after(m, -1);
  if (o.norm_stats) w.norm_attn_stats.resize(static_cast<size_t>(m.layers)), w.norm_mlp_stats.resize(static_cast<size_t>(m.layers));
  for (int64_t l = 0; l < m.layers; ++l) {
    const BlockWeights B = m.block(l);
    NormStats* stats1 = o.norm_stats ? &w.norm_attn_stats[static_cast<size_t>(l)] : nullptr;
    NormStats* stats2 = o.norm_stats ? &w.norm_mlp_stats[static_cast<size_t>(l)] : nullptr;
    Trace t;
    const bool kept = o.keep_layer < 0 || o.keep_layer == l;
    x = block_forward(m, B, x, stream, [&](const Tensor& h) { return attention_steps(w.attention, B, h, l, o, be); }, t,
                      stats1, stats2, kept);
    if (o.refuse_nonfinite) refuse_nonfinite(t, "layer_" + std::to_string(l) + "/");
    stream = stream_after(m, l);
    w.blocks.push_back(kept ? std::move(t) : thinned(std::move(t)));
  }

  // [3] the final norm, the logits, the sampling steps
  const Tensor h = final_norm(m, x, stream, w.model, o.norm_stats ? &w.norm_final_stats : nullptr);
  const Tensor logits = be.linear(h, Linear{m.unembed, m.unembed_bias, m.unembed_packed});  // (B,T,V)
  w.model.add(computed("logits", m.unembed_bias.defined() ? "linear unembed (+ bias)" : "linear unembed",
                       {m.norm == NormKind::None ? stream : "norm_final"}, logits));
  if (o.refuse_nonfinite) refuse_nonfinite(w.model, "");
  if (sample) {
    for (Step& s : sampling_trace(logits, sampling).steps) {
      s.counts_known = true;
      w.model.add(std::move(s));
    }
  } else {
    const std::string why = o.batch > 1 ? "a batch of " + std::to_string(o.batch) + " sequences: no sampling" : "not asked";
    for (const char* s : {"probs", "top_k", "top_p", "next_token"}) w.model.add(skipped_step(s, "", {}, why));
  }
  return w;
}

}  // namespace attnsim::model
