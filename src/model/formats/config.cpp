#include "model/formats/config.h"

#include "engine/error.h"

namespace attnsim::model {

void validate(const ModelConfig& c) {
  // Limits keep every product below 2^40 elements, so nothing downstream can wrap; the
  // memory check before training refuses what would not fit long before these.
  auto in_range = [](const char* what, int64_t v, int64_t hi) {
    if (v <= 0 || v > hi)
      throw Error(std::string(what) + " must be in 1.." + std::to_string(hi) + ", got " + std::to_string(v));
  };
  in_range("vocab", c.vocab, 1 << 20);
  in_range("seq_len", c.seq_len, 1 << 16);
  in_range("d_model", c.d_model, 1 << 14);
  in_range("heads", c.heads, 1 << 10);
  in_range("layers", c.layers, 256);
  if (c.vocab < 2) throw Error("vocab must hold BOS and at least one token, got " + std::to_string(c.vocab));
  if (c.d_model % c.heads != 0)
    throw Error("d_model " + std::to_string(c.d_model) + " is not divisible by heads " + std::to_string(c.heads));
  if (c.kv_heads < 0 || c.kv_heads > c.heads || c.heads % c.kv_group_count() != 0)
    throw Error("kv_heads " + std::to_string(c.kv_heads) + " does not divide heads " + std::to_string(c.heads) +
                ": each key/value head serves a whole group of query heads");
}

std::vector<ParamSpec> param_specs(const ModelConfig& c) {
  const int64_t V = c.vocab, T = c.seq_len, d = c.d_model, m = c.mlp_dim(), kv = c.kv_dim();
  std::vector<ParamSpec> specs{{"embed.weight", {V, d}}};
  if (!c.rope()) specs.push_back({"pos_embed.weight", {T, d}});
  auto linear = [&](const std::string& name, int64_t out, int64_t in) {
    specs.push_back({name + ".weight", {out, in}});
    if (c.bias) specs.push_back({name + ".bias", {out}});
  };
  auto norm = [&](const std::string& name) {
    specs.push_back({name + ".weight", {d}});
    if (c.layernorm) specs.push_back({name + ".bias", {d}});  // RMSNorm: a scale only
  };
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    if (c.norms()) norm(p + "ln");
    linear(p + "attn.W_Q", d, d);
    linear(p + "attn.W_K", kv, d);  // (g·dk, d): one dk block of rows per K/V head
    linear(p + "attn.W_V", kv, d);
    linear(p + "attn.W_O", d, d);
    if (c.mlp) {
      if (c.norms()) norm(p + "ln2");
      if (c.swiglu) linear(p + "mlp.gate", m, d);
      linear(p + "mlp.fc1", m, d);  // SwiGLU's up
      linear(p + "mlp.fc2", d, m);
    }
  }
  if (c.norms()) norm("ln_final");
  if (!c.tied) linear("unembed", V, d);
  return specs;
}

const char* unembed_name(const ModelConfig& c) { return c.tied ? "embed.weight" : "unembed.weight"; }

int64_t param_count(const ModelConfig& c) {
  int64_t n = 0;
  for (const ParamSpec& s : param_specs(c)) n += numel_of(s.shape);
  return n;
}

}  // namespace attnsim::model
