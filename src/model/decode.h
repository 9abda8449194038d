// A trained model on the engine's decode stack (engine/decode_stack.h): the same weights,
// run one token at a time over per-layer KV caches, and what cache eviction does to it.
//
// Only attention-only models map onto the stack (embedding + position, L × (x + attn(x)),
// unembedding); a model with LayerNorm or an MLP is refused with one line.
#pragma once

#include <string>
#include <vector>

#include "engine/decode_stack.h"
#include "model.h"

namespace attnsim::model {

// The stack that runs `model` with caches of t_max positions under `policy`.
StackConfig decode_stack_config(const Model& model, int64_t t_max, const CachePolicy& policy = {});
StackWeights decode_stack_weights(const Model& model);

// StreamingLLM's question on the toy model: teacher-forced decode of `batch` (every row its
// own sequence, all of one length) under a cache policy; per position, the mean loss and
// accuracy of the next-token prediction over the rows. Position t's key set is what the
// policy keeps after t+1 tokens, so eviction is the only difference from the full forward.
struct PositionLoss {
  std::string policy;             // "full", "window=16", "sink=1,window=15"
  std::vector<double> loss;       // (T-1) nats at positions 0..T-2, every target
  std::vector<double> accuracy;   // (T-1)
  double mean_loss = 0;           // over every scored position
  double repeat_loss = 0, repeat_accuracy = 0;  // the predictable targets only (part kRepeat)
};
PositionLoss loss_by_position(const Model& model, const Batch& batch, const CachePolicy& policy);

}  // namespace attnsim::model
