// Baselines and the "learned" rule. See baselines.h.
#include "model/experiments/baselines.h"

#include <cmath>

#include "model/experiments/ablate.h"
#include "model/training/tasks.h"

namespace attnsim::model {

int64_t vocab_targets(const ModelConfig& c) { return c.vocab - 1; }
double chance_accuracy(const ModelConfig& c) { return 1.0 / static_cast<double>(vocab_targets(c)); }
double uniform_loss(const ModelConfig& c) { return std::log(static_cast<double>(vocab_targets(c))); }
double recall_chance(const ModelConfig& c) { return 1.0 / static_cast<double>(value_tokens(c.vocab)); }

bool run_learned(double repeat_accuracy) { return repeat_accuracy >= kRunLearned; }

double repeat_accuracy(const Model& m) {
  const Batch batch = ablation_batch(m.config);
  return cross_entropy(forward_finite(m, batch).logits, batch).parts[kRepeat].accuracy();
}

}  // namespace attnsim::model
