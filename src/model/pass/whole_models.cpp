#include "model/pass/whole_models.h"

namespace attnsim::model {

// [SECTION] the toy model's attention, per layer

MhaConfig attention_config(const ModelConfig& c, int64_t batch, int64_t len) {
  MhaConfig m;
  m.batch = batch;
  m.tq = m.tk = len;
  m.d_model = c.d_model;
  m.heads = c.heads;
  m.kv_heads = c.kv_group_count();  // g < h: the engine's stride-0 broadcast of K/V heads
  m.self_attention = true;
  m.bias = c.bias;
  m.rope_theta = c.rope_theta;  // 0: learned positions, q_rot and k_rot skipped
  m.mask.causal = true;
  return m;
}

MhaWeights attention_weights(const Model& model, int64_t layer) {
  const std::string p = "layers." + std::to_string(layer) + ".attn.";
  auto linear = [&](const char* w) {
    const Tensor* bias = model.params.find(p + w + ".bias");
    return Linear{model.params.get(p + w + ".weight"), bias ? *bias : Tensor()};
  };
  return {linear("W_Q"), linear("W_K"), linear("W_V"), linear("W_O")};
}

// [SECTION] every model as the pass sees it

PassModel pass_model(const hf::HfModel& hm) {
  const hf::HfConfig& c = hm.config;
  const bool gpt2 = c.family == hf::Family::Gpt2;
  PassModel m;
  m.family = c.model_type;
  m.layers = c.layers, m.d_model = c.d_model, m.d_ff = c.d_ff, m.vocab = c.vocab, m.max_positions = c.max_positions;
  m.norm = gpt2 ? NormKind::LayerNorm : NormKind::RmsNorm;
  m.norm_eps = c.norm_eps;
  m.mlp = gpt2 ? MlpKind::Gelu : MlpKind::SwiGlu;
  m.act = gpt2 ? (c.gelu_tanh ? Activation::GeluTanh : Activation::GeluErf) : Activation::Silu;
  m.embed = hm.embed, m.pos_embed = hm.pos_embed, m.norm_f_w = hm.norm_f_w, m.norm_f_b = hm.norm_f_b;
  m.unembed = hm.unembed, m.unembed_packed = hm.unembed_packed;
  m.block = [&hm, gpt2](int64_t l) {
    const hf::HfLayer L = hm.layer(l);
    BlockWeights b{L.norm1_w, L.norm1_b, L.attn, L.norm2_w, L.norm2_b, {}, {}, {}};
    if (gpt2) b.up = L.fc, b.down = L.proj;
    else b.gate = L.gate, b.up = L.up, b.down = L.down;
    return b;
  };
  m.attention = [c](int64_t T) { return hf::hf_attention_config(c, T); };
  return m;
}

PassModel pass_model(const Model& tm) {
  const ModelConfig& c = tm.config;
  const Params& P = tm.params;
  auto opt = [&P](const std::string& name) { return P.find(name) ? *P.find(name) : Tensor(); };
  PassModel m;
  m.family = "toy";
  m.layers = c.layers, m.d_model = c.d_model, m.d_ff = c.mlp ? c.mlp_dim() : 0, m.vocab = c.vocab, m.max_positions = c.seq_len;
  m.norm = c.layernorm ? NormKind::LayerNorm : c.rmsnorm ? NormKind::RmsNorm : NormKind::None;
  m.norm_eps = 1e-5;  // layers.h: torch.nn.LayerNorm's default; Llama's rms_norm_eps as exported
  m.mlp = !c.mlp ? MlpKind::None : c.swiglu ? MlpKind::SwiGlu : MlpKind::Gelu;
  m.act = c.swiglu ? Activation::Silu : Activation::GeluErf;
  m.embed = P.get("embed.weight"), m.pos_embed = opt("pos_embed.weight");  // none under RoPE
  m.norm_f_w = opt("ln_final.weight"), m.norm_f_b = opt("ln_final.bias");
  m.unembed = P.get(unembed_name(c)), m.unembed_bias = opt("unembed.bias");
  m.block = [&tm, opt](int64_t l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    auto linear = [&](const char* name) { return Linear{opt(p + name + ".weight"), opt(p + name + ".bias")}; };
    return BlockWeights{opt(p + "ln.weight"), opt(p + "ln.bias"), attention_weights(tm, l), opt(p + "ln2.weight"),
                        opt(p + "ln2.bias"), linear("mlp.gate"), linear("mlp.fc1"), linear("mlp.fc2")};
  };
  m.attention = [c](int64_t T) { return attention_config(c, 1, T); };
  return m;
}

}  // namespace attnsim::model
