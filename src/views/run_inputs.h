// RunInputs: the weights and the unedited inputs of the runs the app computes, kept between
// recomputes. Editing one input cell copies the kept query (B,Tq,d) and sets the cell;
// toggling a mask or switching a bug reuses both, and the edited query too (the same tensor,
// so forward() can take the projections of the run on screen). Each is rebuilt only when
// what it depends on changes:
//   weights      d_model, bias, seed
//   base inputs  batch, Tq, Tk, d_model, self-attention, sentences, key sentences, input
//                scale, and the seed only when there are no sentences (random inputs)
// The counters say how often each was built, so tests check reuse without a clock.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "engine/mha.h"
#include "engine/scenario.h"

namespace attnsim::app {

class RunInputs {
 public:
  // The weights for c (built on a miss).
  MhaWeights weights(const MhaConfig& c);
  // The inputs for c with the edits applied (the base built on a miss). Throws Error for an
  // edit outside the query.
  MhaInputs inputs(const MhaConfig& c, const Scenario& s, const CellEdits& edits);

  int64_t weights_built() const;
  int64_t inputs_built() const;

 private:
  struct WeightsKey {
    int64_t d_model, kv_dim;  // kv_dim: rows of W_K / W_V (g·dk)
    bool bias;
    uint64_t seed;
    bool operator==(const WeightsKey&) const = default;
  };
  struct InputsKey {
    int64_t batch, tq, tk, d_model;
    bool self_attention;
    uint64_t seed;
    std::vector<std::string> sentences, key_sentences;
    float input_scale;
    bool operator==(const InputsKey&) const = default;
  };
  // A bug-lab scenario computes two configs (the run and the correct one): keep two of each.
  static constexpr size_t kKeep = 2;
  mutable std::mutex mutex_;  // the worker builds; the UI thread may read the counters
  std::vector<std::pair<WeightsKey, MhaWeights>> weights_;  // most recent first
  std::vector<std::pair<InputsKey, MhaInputs>> inputs_;
  struct Edited {
    InputsKey key;
    CellEdits edits;
    MhaInputs inputs;
  };
  std::vector<Edited> edited_;  // the last inputs with edits applied, most recent first
  int64_t weights_built_ = 0, inputs_built_ = 0;
};

}  // namespace attnsim::app
