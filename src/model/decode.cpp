#include "decode.h"

#include <algorithm>
#include <cmath>

#include "engine/error.h"
#include "model.h"
#include "tasks.h"

namespace attnsim::model {

StackConfig decode_stack_config(const Model& m, int64_t t_max, const CachePolicy& policy) {
  const ModelConfig& c = m.config;
  if (c.layernorm || c.mlp)
    throw Error(std::string("decode runs attention-only models; this one has ") +
                (c.layernorm && c.mlp ? "LayerNorm and an MLP" : c.layernorm ? "LayerNorm" : "an MLP"));
  StackConfig s;
  s.attn = attention_config(c, 1, 1);  // heads, bias, d_model; sizes are set per call
  s.layers = c.layers;
  s.t_max = t_max;
  s.policy = policy;
  return s;
}

StackWeights decode_stack_weights(const Model& m) {
  StackWeights w;
  w.embedding = m.params.get("embed.weight");       // (V,d)
  w.position = m.params.get("pos_embed.weight");    // (T,d)
  w.unembedding = m.params.get("unembed.weight");   // (V,d): torch's Linear(d, V) layout
  if (const Tensor* b = m.params.find("unembed.bias")) w.unembedding_bias = *b;
  for (int64_t l = 0; l < m.config.layers; ++l) w.layers.push_back(attention_weights(m, l));
  return w;
}

PositionLoss loss_by_position(const Model& m, const Batch& batch, const CachePolicy& policy) {
  const int64_t B = batch.batch, T = batch.len, V = m.config.vocab, d = m.config.d_model;
  if (T < 2) throw Error("loss by position needs sequences of at least 2 tokens");
  std::vector<std::vector<int64_t>> prompts(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) prompts[b].assign(batch.tokens.begin() + b * T, batch.tokens.begin() + (b + 1) * T);
  StackConfig sc = decode_stack_config(m, T, policy);
  sc.prefill_rows = 1;  // every position is its own decode step
  Decoder dec(sc, prompts, decode_stack_weights(m));

  PositionLoss out;
  out.policy = policy.text();
  out.loss.assign(static_cast<size_t>(T - 1), 0.0);
  out.accuracy.assign(static_cast<size_t>(T - 1), 0.0);
  const Tensor& U = m.params.get("unembed.weight");
  const Tensor* bias = m.params.find("unembed.bias");
  std::vector<double> logits(static_cast<size_t>(V));
  double repeat_loss = 0, repeat_hits = 0;
  int64_t repeats = 0;
  // hidden (rows,d) of one sequence, rows starting at `first`: score each row's next token
  auto score = [&](int64_t b, const Tensor& hidden, int64_t first) {
    for (int64_t r = 0; r < hidden.size(0); ++r) {
      const int64_t t = first + r;
      if (t + 1 >= T) continue;
      const float* x = hidden.f32() + r * d;
      double top = -1e300;
      int64_t arg = 0;
      for (int64_t v = 0; v < V; ++v) {
        double z = bias ? bias->f32()[v] : 0.0;
        for (int64_t e = 0; e < d; ++e) z += static_cast<double>(x[e]) * U.f32()[v * d + e];
        logits[v] = z;
        if (z > top) top = z, arg = v;
      }
      double sum = 0;
      for (double z : logits) sum += std::exp(z - top);
      const int64_t target = batch.tokens[b * T + t + 1];
      const double loss = top + std::log(sum) - logits[target], hit = arg == target ? 1.0 : 0.0;
      out.loss[t] += loss / static_cast<double>(B);
      out.accuracy[t] += hit / static_cast<double>(B);
      if (batch.part[b * T + t] == kRepeat) repeat_loss += loss, repeat_hits += hit, ++repeats;
    }
  };
  for (DecodeStep st = dec.prefill();; st = dec.step()) {
    for (int64_t b = 0; b < B; ++b) score(b, st.hidden[b].contiguous(), st.first_position);
    if (dec.length() >= T) break;
  }
  for (double l : out.loss) out.mean_loss += l / static_cast<double>(T - 1);
  if (repeats > 0) out.repeat_loss = repeat_loss / repeats, out.repeat_accuracy = repeat_hits / repeats;
  return out;
}

}  // namespace attnsim::model
