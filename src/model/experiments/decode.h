// A trained model on the engine's decode stack (engine/decode_stack.h): the same weights,
// run one token at a time over per-layer KV caches, and what cache eviction does to it.
//
// The stack runs the model's embeddings and unembedding; each layer is the whole pass's block
// (whole_pass.h block_forward: norms and an MLP where the model has them) around the stack's
// cached call, and the final norm comes before the unembedding.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/decode_stack.h"
#include "engine/scenario.h"
#include "model/pass/forward.h"

namespace attnsim::model {

// The stack that runs `model` with caches of t_max positions under `policy`.
StackConfig decode_stack_config(const Model& model, int64_t t_max, const CachePolicy& policy = {});
StackWeights decode_stack_weights(const Model& model);
// Bytes the whole pass's steps around attention hold per fed row, over every layer (the norms,
// residuals and MLP a decode call's traces keep): what a decode of `rows` fed rows adds to the
// engine's predict_decode_bytes. Saturates instead of wrapping.
int64_t predict_block_bytes(const ModelConfig& config, int64_t rows);

// A decode scenario on the trained model (DecodePreset::trained): the stack under `policy`
// ("" = the preset's), the model's weights, and the prompts as `encode` reads them (a language
// model's tokenizer), by default in the toy's alphabet (BOS first).
// T_max is the preset's, else the longest prompt + the steps. Throws Error (a model the stack
// cannot run, a bad policy).
struct ScenarioStack {
  StackConfig config;
  StackWeights weights;
  std::vector<std::vector<int64_t>> prompts;
};
using Encoder = std::function<std::vector<int32_t>(const std::string& text)>;
ScenarioStack scenario_stack(const Model& model, const DecodePreset& preset, const std::string& policy = "",
                             const Encoder& encode = {});

// The last layer's output rows of one sequence, every token of `tokens` fed (none generated),
// one tensor (n,d) per decode call under `config`.
std::vector<Tensor> fed_rows(const StackConfig& config, const StackWeights& w, const std::vector<int64_t>& tokens);
// Per position p < T-1: -log softmax(h_p · Uᵀ + b)[tokens[p+1]] in nats, computed in double;
// `rows` are fed_rows' (consecutive calls' (n,d) outputs).
// With `hits`, also whether the top logit is the next token (1) or not (0), per position.
std::vector<double> next_token_losses(const std::vector<Tensor>& rows, const std::vector<int64_t>& tokens,
                                      const StackWeights& w, std::vector<uint8_t>* hits = nullptr);
// Per position p < T-1: 1 when the target tokens[p+1] can be copied: tokens[p] occurred
// before, and the token after its latest earlier occurrence is the target (what an induction
// head predicts); the other targets are not in the text before them.
std::vector<uint8_t> copyable_targets(const std::vector<int64_t>& tokens);

// What eviction costs one sequence (StreamingLLM's question, on the tokens a scenario feeds):
// the next-token loss by position with every key, under config's policy, and under a plain
// window of as many slots (which evicts BOS first). `from` is the policy's slot count: the
// first position whose key set lost a token; the means are over positions from..T-2.
struct EvictionLosses {
  std::vector<double> full, policy, window;  // (T-1) nats each
  std::string policy_text, window_text;      // "sink=1,window=15", "window=16"
  int64_t from = 0;
  double mean_full = 0, mean_policy = 0, mean_window = 0;
  // From `from` on: the copyable targets (copyable_targets), how many of them the top guess
  // gets right under each cache, and the mean loss on the other targets.
  int64_t copy_targets = 0;
  int64_t copy_full = 0, copy_policy = 0, copy_window = 0;
  double other_full = 0, other_policy = 0, other_window = 0;
};
EvictionLosses eviction_losses(const StackConfig& config, const StackWeights& w, const std::vector<int64_t>& tokens);

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
