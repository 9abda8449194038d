// Decoding on the whole pass (whole_pass.h) over per-layer KV caches, norms and MLP included:
// the prompt runs once, then each chosen token alone, attending to the cached K/V. Each new
// token is chosen from the last row's logits by sample_row, so greedy and a seeded temperature draw follow sampling.h's rules. Step i draws with
// options.step + i: a seed repeats exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/pass/forward.h"
#include "model/pass/sampling.h"

namespace attnsim::model {

// `tokens` followed by up to `steps` chosen tokens. Stops early after `stop` (e.g. the end-of-text
// token) or when the sequence reaches the model's seq_len. Throws Error for bad options
// (validate_sampling), an empty sequence or one already longer than seq_len.
std::vector<int32_t> generate(const Model& model, std::vector<int32_t> tokens, int64_t steps,
                              const SamplingOptions& options, std::optional<int32_t> stop = std::nullopt);

}  // namespace attnsim::model
