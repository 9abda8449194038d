// What a trained model's numbers are read against (issue 25), in one place for the lessons'
// model.* quantities, the app's Training tab and the slides:
//   - a uniform guess over the tokens that can be targets: V - 1 of them, since BOS is never
//     a target; its accuracy 1/(V-1) and its loss ln(V-1) nats
//   - the rule that a run "learned" the task: at least half of the predictable second copies
//     (part kRepeat of ablation_batch) right
#pragma once

#include <cstdint>

#include "model/pass/forward.h"

namespace attnsim::model {

int64_t vocab_targets(const ModelConfig& config);   // V - 1
double chance_accuracy(const ModelConfig& config);  // 1 / (V - 1)
double uniform_loss(const ModelConfig& config);     // ln(V - 1), nats
// The tasks recall and gist: a uniform guess among the value tokens (every recall answer is
// one), and a coin flip between the two halves (gist's answer is one of two tokens).
double recall_chance(const ModelConfig& config);  // 1 / value_tokens(V)
inline constexpr double kGistChance = 0.5;

inline constexpr double kRunLearned = 0.5;
bool run_learned(double repeat_accuracy);  // repeat_accuracy >= kRunLearned

// The model's accuracy on ablation_batch's predictable targets (part kRepeat), as trained:
// the number run_learned reads (lesson claims model.repeat_accuracy and model.runs_*).
double repeat_accuracy(const Model& model);

}  // namespace attnsim::model
