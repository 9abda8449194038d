// MHA -> GQA conversion of a trained model, the GQA paper's recipe (Ainslie et al., 2023,
// "GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints"):
// each group's key and value projection heads become the MEAN of the original heads in that
// group; W_Q, W_O and every other parameter are kept. The model then usually needs a short
// uptraining (train() with the original recipe) to recover.
#pragma once

#include <cstdint>

#include "model/training/backward.h"

namespace attnsim::model {

// Returns a new model (no storage shared with `model`) with kv_heads = g. Groups are
// consecutive, as the engine reads them: new K/V head j is the mean of the model's K/V heads
// j·s .. j·s + s − 1, s = g0 / g (g0 = the model's K/V heads; h for an MHA model), so query
// head hh keeps reading the mean of what it read before. g = g0 returns an exact copy.
// Throws Error when g is not in 1..g0 or does not divide g0.
Model convert_to_gqa(const Model& model, int64_t g);

}  // namespace attnsim::model
