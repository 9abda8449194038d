#include "model/pass/generate.h"

#include <string>

#include "engine/error.h"
#include "engine/kv_cache.h"
#include "model/pass/whole_models.h"
#include "model/pass/whole_pass.h"

namespace attnsim::model {

std::vector<int32_t> generate(const Model& model, std::vector<int32_t> tokens, int64_t steps,
                              const SamplingOptions& options, std::optional<int32_t> stop) {
  const int64_t V = model.config.vocab, T_max = model.config.seq_len;
  validate_sampling(options, V);
  if (tokens.empty()) throw Error("decoding needs at least one token to start from");
  if (static_cast<int64_t>(tokens.size()) > T_max)
    throw Error("the sequence has " + std::to_string(tokens.size()) + " tokens; this model reads at most " +
                std::to_string(T_max));
  const PassModel pass = pass_model(model);
  const MhaConfig a = pass.attention(1);
  std::vector<KvCache> caches;
  for (int64_t l = 0; l < model.config.layers; ++l) caches.emplace_back(1, a.kv_group_count(), a.head_dim(), T_max);
  PassOptions o;
  o.sample = false;
  o.caches = &caches;
  std::vector<int32_t> feed = tokens;  // the prompt once, then each chosen token
  for (int64_t i = 0; i < steps && static_cast<int64_t>(tokens.size()) < T_max; ++i) {
    const WholeTrace w = whole_forward(pass, feed, {}, o);
    const Tensor& logits = w.logits();  // (1,n,V), contiguous
    SamplingOptions s = options;
    s.step = options.step + i;
    const int32_t next = sample_row(logits.f32() + (logits.size(1) - 1) * V, V, s).next;
    tokens.push_back(next);
    feed = {next};
    if (stop && next == *stop) break;
  }
  return tokens;
}

}  // namespace attnsim::model
