#include "model/experiments/decode.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/error.h"
#include "model/pass/forward.h"
#include "model/pass/whole_models.h"
#include "model/pass/whole_pass.h"
#include "model/training/tasks.h"
#include "model/text/tokenizer.h"

namespace attnsim::model {

StackConfig decode_stack_config(const Model& m, int64_t t_max, const CachePolicy& policy) {
  const ModelConfig& c = m.config;
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
  if (const Tensor* pos = m.params.find("pos_embed.weight")) w.position = *pos;  // (T,d); none under RoPE
  w.unembedding = m.params.get(unembed_name(m.config));   // (V,d): torch's Linear(d, V) layout
  if (const Tensor* b = m.params.find("unembed.bias")) w.unembedding_bias = *b;
  for (int64_t l = 0; l < m.config.layers; ++l) w.layers.push_back(attention_weights(m, l));
  // Each layer is the whole pass's block around the stack's cached call (with norms and an MLP
  // where the model has them; else listed as skipped). The pass reads the model, so the hooks
  // keep a copy of it (its tensors are shared, not copied).
  auto owned = std::make_shared<const Model>(m);
  auto pass = std::make_shared<const PassModel>(pass_model(*owned));
  w.block = [owned, pass](int64_t l, const Tensor& x, const Attend& attend, Trace& t) {
    return block_forward(*pass, pass->block(l), x, stream_after(*pass, l - 1), attend, t);
  };
  w.final_norm = [owned, pass](const Tensor& x) {
    Trace unused;  // the stack's traces are per layer; the final norm has no layer
    return final_norm(*pass, x, "", unused);
  };
  return w;
}

int64_t predict_block_bytes(const ModelConfig& c, int64_t rows) {
  // per layer: resid_attn, and with norms norm_attn and norm_mlp; with an MLP mlp_down and
  // resid_mlp (d each) and mlp_up and mlp_act (ff each; SwiGLU's mlp_gate too); then the final
  // norm (d)
  const long double d = c.d_model, per_layer = d * (1 + (c.norms() ? 2 : 0) + (c.mlp ? 2 : 0)) +
                                                (c.mlp ? (c.swiglu ? 3.0L : 2.0L) * c.mlp_dim() : 0.0L);
  const long double bytes = 4.0L * rows * (c.layers * per_layer + (c.norms() ? d : 0));
  const long double cap = static_cast<long double>(std::numeric_limits<int64_t>::max() / 2);
  return bytes > cap ? std::numeric_limits<int64_t>::max() / 2 : static_cast<int64_t>(bytes);
}

ScenarioStack scenario_stack(const Model& m, const DecodePreset& preset, const std::string& policy, const Encoder& encoder) {
  ScenarioStack st;
  int64_t longest = 0;
  for (const auto& p : preset.prompts) {
    const std::vector<int32_t> ids = encoder ? encoder(p) : encode(p, m.config.vocab);  // BOS first
    st.prompts.emplace_back(ids.begin(), ids.end());
    longest = std::max<int64_t>(longest, static_cast<int64_t>(ids.size()));
  }
  const int64_t t_max = preset.t_max > 0 ? preset.t_max : longest + preset.steps;
  st.config = decode_stack_config(m, t_max, parse_cache_policy(policy.empty() ? preset.policy : policy));
  st.config.block_size = preset.block_size;
  st.weights = decode_stack_weights(m);
  return st;
}

std::vector<Tensor> fed_rows(const StackConfig& sc, const StackWeights& w, const std::vector<int64_t>& tokens) {
  Decoder dec(sc, {tokens}, w);  // the whole sequence as the prompt: every token is fed, none generated
  std::vector<Tensor> rows{dec.prefill().hidden[0]};
  while (dec.length() < static_cast<int64_t>(tokens.size())) rows.push_back(dec.step().hidden[0]);
  return rows;
}

std::vector<double> next_token_losses(const std::vector<Tensor>& rows, const std::vector<int64_t>& tokens,
                                      const StackWeights& w, std::vector<uint8_t>* hits) {
  if (hits) hits->clear();
  const Tensor& U = w.unembedding;  // (V,d)
  const int64_t V = U.size(0), d = U.size(1);
  std::vector<double> out, logits(static_cast<size_t>(V));
  int64_t p = 0;
  for (const Tensor& r : rows)
    for (int64_t i = 0; i < r.size(0); ++i, ++p) {
      if (p + 1 >= static_cast<int64_t>(tokens.size())) break;
      double top = -1e300;
      int64_t arg = 0;
      for (int64_t v = 0; v < V; ++v) {
        double z = w.unembedding_bias.defined() ? w.unembedding_bias.at({v}) : 0.0;
        for (int64_t e = 0; e < d; ++e) z += static_cast<double>(r.at({i, e})) * U.at({v, e});
        logits[static_cast<size_t>(v)] = z;
        if (z > top) top = z, arg = v;
      }
      double sum = 0;
      for (double z : logits) sum += std::exp(z - top);
      const int64_t target = tokens[static_cast<size_t>(p + 1)];
      out.push_back(top + std::log(sum) - logits[static_cast<size_t>(target)]);
      if (hits) hits->push_back(arg == target ? 1 : 0);
    }
  return out;
}

std::vector<uint8_t> copyable_targets(const std::vector<int64_t>& tokens) {
  const size_t T = tokens.size();
  std::vector<uint8_t> out(T > 0 ? T - 1 : 0, 0);
  for (size_t p = 1; p + 1 < T; ++p)
    for (size_t q = p; q-- > 0;)
      if (tokens[q] == tokens[p]) {
        out[p] = tokens[q + 1] == tokens[p + 1] ? 1 : 0;
        break;
      }
  return out;
}

EvictionLosses eviction_losses(const StackConfig& config, const StackWeights& w, const std::vector<int64_t>& tokens) {
  if (config.block_size > 0) throw Error("eviction losses need a contiguous cache (a paged cache evicts nothing)");
  EvictionLosses out;
  StackConfig full = config, window = config;
  full.policy = CachePolicy{};
  window.policy.kind = PolicyKind::Window;
  window.policy.window = config.policy.slots(config.t_max);
  window.policy.sink = 0;
  out.policy_text = config.policy.text();
  out.window_text = window.policy.text();
  out.from = config.policy.slots(config.t_max);
  std::vector<uint8_t> hit_full, hit_policy, hit_window;
  out.full = next_token_losses(fed_rows(full, w, tokens), tokens, w, &hit_full);
  out.policy = next_token_losses(fed_rows(config, w, tokens), tokens, w, &hit_policy);
  out.window = next_token_losses(fed_rows(window, w, tokens), tokens, w, &hit_window);
  const std::vector<uint8_t> copyable = copyable_targets(tokens);
  int64_t others = 0;
  for (size_t i = static_cast<size_t>(out.from); i < out.full.size() && i < copyable.size(); ++i) {
    if (copyable[i]) {
      ++out.copy_targets;
      out.copy_full += hit_full[i], out.copy_policy += hit_policy[i], out.copy_window += hit_window[i];
    } else {
      ++others;
      out.other_full += out.full[i], out.other_policy += out.policy[i], out.other_window += out.window[i];
    }
  }
  if (others > 0) {
    const double n = static_cast<double>(others);
    out.other_full /= n, out.other_policy /= n, out.other_window /= n;
  }
  auto mean = [&](const std::vector<double>& v) {
    double sum = 0;
    size_t n = 0;
    for (size_t i = static_cast<size_t>(out.from); i < v.size(); ++i) sum += v[i], ++n;
    return n ? sum / static_cast<double>(n) : 0.0;
  };
  out.mean_full = mean(out.full), out.mean_policy = mean(out.policy), out.mean_window = mean(out.window);
  return out;
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
  const Tensor& U = m.params.get(unembed_name(m.config));
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
