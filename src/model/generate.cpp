#include "generate.h"

#include <string>

#include "engine/error.h"
#include "tasks.h"

namespace attnsim::model {

std::vector<int32_t> generate(const Model& model, std::vector<int32_t> tokens, int64_t steps,
                              const SamplingOptions& options, std::optional<int32_t> stop) {
  const int64_t V = model.config.vocab, T_max = model.config.seq_len;
  validate_sampling(options, V);
  if (tokens.empty()) throw Error("decoding needs at least one token to start from");
  if (static_cast<int64_t>(tokens.size()) > T_max)
    throw Error("the sequence has " + std::to_string(tokens.size()) + " tokens; this model reads at most " +
                std::to_string(T_max));
  for (int64_t i = 0; i < steps && static_cast<int64_t>(tokens.size()) < T_max; ++i) {
    const Batch batch = batch_from_tokens({tokens});
    const Tensor logits = forward(model, batch).logits.contiguous();  // (1,T,V)
    SamplingOptions o = options;
    o.step = options.step + i;
    const int32_t next = sample_row(logits.f32() + (batch.len - 1) * V, V, o).next;
    tokens.push_back(next);
    if (stop && next == *stop) break;
  }
  return tokens;
}

}  // namespace attnsim::model
