#include "hf_forward.h"

#include <algorithm>
#include <cmath>

#include "engine/checked.h"
#include "engine/decode.h"
#include "engine/error.h"
#include "pass_ops.h"
#include "whole_pass.h"

namespace attnsim::model::hf {

// [SECTION] the layers around attention

namespace {

NormKind norm_kind(const HfConfig& c) { return c.family == Family::Gpt2 ? NormKind::LayerNorm : NormKind::RmsNorm; }

// LayerNorm (GPT-2) or RMSNorm (Llama) of x (1,T,d)   (1,T,d)
Tensor norm(const HfConfig& c, const Tensor& x, const Tensor& w, const Tensor& b) {
  return apply_norm(norm_kind(c), x, w, b, c.norm_eps);
}

// GPT-2: c_proj(gelu_new(c_fc(x))); Llama: down(silu(gate(x)) ⊙ up(x))     (1,T,d) -> (1,T,d)
Tensor mlp(const HfConfig& c, const HfLayer& L, const Tensor& x, Backend& be) {
  if (c.family == Family::Gpt2) {
    Tensor h = be.linear(x, L.fc);  // (1,T,ff)
    activate(c.gelu_tanh ? Activation::GeluTanh : Activation::GeluErf, h.f32(), h.numel());
    return be.linear(h, L.proj);
  }
  Tensor g = be.linear(x, L.gate);  // (1,T,ff)
  const Tensor u = be.linear(x, L.up);
  activate(Activation::Silu, g.f32(), g.numel());
  float* pg = g.f32();
  const float* pu = u.f32();
  for (int64_t i = 0, n = g.numel(); i < n; ++i) pg[i] *= pu[i];
  return be.linear(g, L.down);
}

// token (+ learned position) embeddings of rows at positions position0..   (1,n,d)
Tensor embed(const HfModel& m, const std::vector<int32_t>& tokens, int64_t position0) {
  const int64_t n = static_cast<int64_t>(tokens.size()), d = m.config.d_model;
  Tensor x = Tensor::empty({1, n, d});
  for (int64_t t = 0; t < n; ++t)
    for (int64_t i = 0; i < d; ++i)
      x.f32()[t * d + i] = m.embed.f32()[tokens[t] * d + i] +
                           (m.pos_embed.defined() ? m.pos_embed.f32()[(position0 + t) * d + i] : 0.0f);
  return x;
}

// final norm, then the unembedding: (1,n,d) -> (n,V)
Tensor unembed(const HfModel& m, const Tensor& x, Backend& be) {
  const Tensor h = norm(m.config, x, m.norm_f_w, m.norm_f_b);
  const Tensor logits = be.linear(h, Linear{m.unembed, Tensor(), m.unembed_packed});  // (1,n,V)
  return logits.view({x.size(1), m.config.vocab});
}

void check_finite(const Tensor& t, const std::string& what) {
  const NonFinite n = count_nonfinite(t);
  if (n.nan || n.neginf || n.posinf)
    throw Error("the forward pass overflowed float32: first non-finite tensor: " + what + " (" +
                std::to_string(n.nan) + " NaN, " + std::to_string(n.neginf + n.posinf) + " inf)");
}

}  // namespace

void check_tokens(const HfConfig& c, const std::vector<int32_t>& tokens) {
  check_token_ids(tokens, c.vocab, c.max_positions);
}

// [SECTION] the whole pass

int64_t predict_hf_forward_bytes(const HfConfig& c, int64_t T, bool keep_every_trace) {
  const MhaConfig a = hf_attention_config(c, T);
  const Size trace = predict_trace_bytes(a), f = 4;
  const Size residual = Size(T) * c.d_model * f * 4 + Size(T) * c.d_ff * f * 3;  // x, norms, MLP hiddens
  const Size alpha_ctx = Size(c.heads) * T * T * f + Size(T) * c.d_model * f;     // kept per layer
  const Size logits = Size(T) * c.vocab * f;
  const Size traces = keep_every_trace ? Size(c.layers) * trace : trace * 2;
  return (traces + Size(c.layers) * alpha_ctx + residual + logits).value();
}

HfForward hf_forward(const HfModel& m, const std::vector<int32_t>& tokens, const HfForwardOptions& o) {
  const HfConfig& c = m.config;
  check_tokens(c, tokens);
  const int64_t T = static_cast<int64_t>(tokens.size());
  Backend& be = cpu_backend();
  const MhaConfig a = hf_attention_config(c, T);
  HfForward r;
  Tensor x = embed(m, tokens, 0);  // (1,T,d) the residual stream
  for (int64_t l = 0; l < c.layers; ++l) {
    const HfLayer L = m.layer(l);  // float32 (widened now from F16 / BF16)
    MhaInputs in;
    in.query = in.key = in.value = norm(c, x, L.norm1_w, L.norm1_b);  // (1,T,d)
    if (static_cast<size_t>(l) < o.patches.size()) in.head_patches = o.patches[static_cast<size_t>(l)];
    ForwardResult f = forward(a, L.attn, in, be);  // the engine's named steps, causal
    const Tensor& out = f.trace.at("out").out;
    check_finite(out, "layers." + std::to_string(l) + ".attn.out");
    add_into(x, out);
    add_into(x, mlp(c, L, norm(c, x, L.norm2_w, L.norm2_b), be));
    check_finite(x, "layers." + std::to_string(l) + " output");
    r.alpha.push_back(f.trace.at("alpha").out);   // (1,h,T,T)
    r.ctx.push_back(f.trace.at("ctx_heads").out);  // (1,h,T,dk)
    if (o.keep_layer < 0 || o.keep_layer == l) r.traces.push_back(std::move(f.trace));
    else r.traces.emplace_back();
  }
  r.logits = unembed(m, x, be);
  check_finite(r.logits, "logits");
  return r;
}

// [SECTION] incremental (KV cache)

HfDecoder::HfDecoder(const HfModel& m, int64_t t_max) : model_(m) {
  const HfConfig& c = m.config;
  check_range(t_max, "decode length (prompt + steps)", 1, c.max_positions);
  for (int64_t l = 0; l < c.layers; ++l) caches_.emplace_back(1, c.kv_heads, c.head_dim(), t_max);
}

int64_t HfDecoder::cache_bytes() const {
  int64_t b = 0;
  for (const KvCache& k : caches_) b = checked_add(b, k.storage_bytes());
  return b;
}

std::vector<float> HfDecoder::feed(const std::vector<int32_t>& tokens, std::vector<Trace>* traces) {
  const HfConfig& c = model_.config;
  check_tokens(c, tokens);
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (length_ + n > caches_.front().t_max())
    throw Error("decode past the cache: " + std::to_string(length_ + n) + " positions, T_max " +
                std::to_string(caches_.front().t_max()));
  Backend& be = cpu_backend();
  const MhaConfig a = hf_attention_config(c, n, length_);
  Tensor x = embed(model_, tokens, length_);  // (1,n,d)
  if (traces) traces->clear();
  for (int64_t l = 0; l < c.layers; ++l) {
    const HfLayer L = model_.layer(l);
    // attend_cached sets the RoPE position to the cache's length itself
    Trace t = attend_cached(a, L.attn, caches_[static_cast<size_t>(l)], norm(c, x, L.norm1_w, L.norm1_b), be);
    add_into(x, t.at("out").out);
    add_into(x, mlp(c, L, norm(c, x, L.norm2_w, L.norm2_b), be));
    check_finite(x, "layers." + std::to_string(l) + " output");
    if (traces) traces->push_back(std::move(t));
  }
  length_ += n;
  const Tensor logits = unembed(model_, x.narrow(1, n - 1, 1).contiguous(), be);  // (1,V)
  check_finite(logits, "logits");
  return logits.to_vector();
}

}  // namespace attnsim::model::hf
