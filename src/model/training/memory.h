// Memory of the model commands, predicted from a config (the options, or a checkpoint's
// header: read_checkpoint_header) before anything is allocated (engine/fits.h refuses what
// does not fit; train.h predicts training). Each prediction is the command's peak: the parameters it holds plus the largest
// forward (or training step) alive at once; the batches are the fixed ones each command runs
// (scoring_batch, ablation_batch, evaluate_repeats' 256 sequences), so the terms that grow
// with the vocabulary (the (B,T,V) logits) are counted where they arise.
#pragma once

#include <cstdint>
#include <string>

#include "model/formats/config.h"

namespace attnsim::model {

// The head table and the repeat evaluation of a loaded model (cli print_model_report: heads,
// and train after its run).
int64_t predict_report_bytes(const ModelConfig& config);
// ablate: the model, and the plain and the ablated forward of ablation_batch alive together.
int64_t predict_ablation_bytes(const ModelConfig& config);


}  // namespace attnsim::model
