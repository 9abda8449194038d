// The experiments of experiments.h that read a model rather than train one (roles, ablation,
// sink), run on a Hugging Face model. Its training data is unknown, so each is measured on
// TransformerLens's repeated random sequence, BOS + r + r (hf_eval.h): the first copy is
// unpredictable (chance is 1/V), the second is predictable only by copying, which is what
// induction heads do.
//
//   positions 0 .. L-1     predict r[0 .. L-1]      first copy ("first" part)
//   positions L+1 .. 2L-1  predict r[1 .. L-1]      second copy ("repeat" part; r[0] after r[L-1]
//                                                    is not predictable and not scored)
//
// The first-token share is the weight on position 0: BOS where the config has one.
// streaming needs the toy model's cache policies and is refused for a Hugging Face folder.
#pragma once

#include <cstdint>
#include <string>

#include "model/experiments/experiments.h"
#include "model/formats/hf_model.h"

namespace attnsim::model::hf {

struct HfExperimentOptions {
  int64_t repeat_len = 24;   // L
  int64_t sequences = 4;     // seeds seed, seed+1, ...
  uint64_t seed = 1;
};

// Loss (nats) and top-1 accuracy of the two parts, summed over every sequence.
struct RepeatQuality {
  double loss_first = 0, loss_repeat = 0, accuracy_repeat = 0;
  int64_t first_targets = 0, repeat_targets = 0;
};
// The model on the options' repeated sequences, with `patches` (HfForwardOptions::patches:
// heads zeroed) applied in every run.
RepeatQuality repeat_quality(const HfModel& model, const HfExperimentOptions& options,
                             const std::vector<std::vector<HeadPatch>>& patches = {});

// Error for an experiment that trains its own models, or streaming; else the bytes it holds
// beside the model (one forward pass with alpha of every layer).
int64_t predict_hf_experiment_bytes(const std::string& name, const HfConfig& config, const HfExperimentOptions& options);
ExperimentResult run_hf_experiment(const std::string& name, const HfModel& model, const HfExperimentOptions& options);

}  // namespace attnsim::model::hf
