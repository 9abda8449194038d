// Ablation: knock heads out (their ctx slice before W_O becomes zeros, or its mean over a
// reference batch) and measure what the model loses.
#pragma once

#include <vector>

#include "model/pass/forward.h"

namespace attnsim::model {

// Mean ctx per head over a batch: [layer][head] (dk), from ctx_heads of each layer's trace.
std::vector<std::vector<std::vector<float>>> head_means(const Model& model, const Batch& batch);

struct AblationEval {
  LossStats base, ablated;  // on the same batch
};
AblationEval evaluate_ablation(const Model& model, const Batch& batch, const Ablation& ablation);

// One row per head, each ablated alone, plus the baseline: the full one-at-a-time table.
struct AblationRow {
  HeadRef head;
  LossStats stats;
};
std::vector<AblationRow> ablate_each_head(const Model& model, const Batch& batch, bool mean);

// Pruning after training: in every layer, the heads to zero so that only the `keep` most
// important stay, importance being the rise in repeat loss on `batch` when a head alone is
// zeroed (of equal rises, the lower index is zeroed first). Throws Error unless 1 <= keep <= heads.
Ablation prune_to(const Model& model, const Batch& batch, int64_t keep);

// The evaluation batch the CLI and the app use: the task's own sequences (BOS, noise, r, r)
// with repeat lengths across the trained range, fixed seed.
Batch ablation_batch(const ModelConfig& config);

// "0.1,1.3" -> {{0,1},{1,3}}; throws Error naming a bad item or a head outside the model.
std::vector<HeadRef> parse_heads(const std::string& text, const ModelConfig& config);

}  // namespace attnsim::model
