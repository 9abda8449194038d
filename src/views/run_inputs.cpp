// RunInputs: see run_inputs.h.
#include "views/run_inputs.h"

#include <algorithm>

namespace attnsim::app {

namespace {

// Moves entry i to the front (most recent) and drops the oldest beyond `keep`.
template <class Entries>
void touch(Entries& entries, size_t i, size_t keep) {
  std::rotate(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(i),
              entries.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  if (entries.size() > keep) entries.resize(keep);
}

}  // namespace

MhaWeights RunInputs::weights(const MhaConfig& c) {
  const WeightsKey key{c.d_model, c.kv_dim(), c.bias, c.seed};
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < weights_.size(); ++i)
    if (weights_[i].first == key) {
      touch(weights_, i, kKeep);
      return weights_.front().second;
    }
  weights_.emplace_back(key, init_weights(c.d_model, c.bias, c.seed, c.kv_dim()));
  ++weights_built_;
  touch(weights_, weights_.size() - 1, kKeep);
  return weights_.front().second;
}

MhaInputs RunInputs::inputs(const MhaConfig& c, const Scenario& s, const CellEdits& edits) {
  if (s.user_input.defined()) {  // the user's own tensor: nothing to build or keep
    MhaInputs own{s.user_input, s.user_input, s.user_input, {}, {}};
    return edits.empty() ? own : apply_edits(c, std::move(own), edits);
  }
  const InputsKey key{c.batch,   c.tq, c.tk, c.d_model, c.self_attention, s.sentences.empty() ? c.seed : 0,
                      s.sentences, s.key_sentences, s.input_scale};
  MhaInputs base;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t i = 0;
    while (i < inputs_.size() && !(inputs_[i].first == key)) ++i;
    if (i == inputs_.size()) {
      inputs_.emplace_back(key, base_inputs(c, s.sentences, s.key_sentences, s.input_scale));
      ++inputs_built_;
    }
    touch(inputs_, i, kKeep);
    base = inputs_.front().second;  // shares storage; apply_edits copies before it writes
    if (edits.empty()) return base;
    for (size_t e = 0; e < edited_.size(); ++e)
      if (edited_[e].key == key && edited_[e].edits == edits) {
        touch(edited_, e, kKeep);
        return edited_.front().inputs;
      }
  }
  MhaInputs out = apply_edits(c, std::move(base), edits);  // outside the lock: a (B,Tq,d) copy
  std::lock_guard<std::mutex> lock(mutex_);
  edited_.insert(edited_.begin(), Edited{key, edits, out});
  if (edited_.size() > kKeep) edited_.resize(kKeep);
  return out;
}

int64_t RunInputs::weights_built() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return weights_built_;
}

int64_t RunInputs::inputs_built() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return inputs_built_;
}

}  // namespace attnsim::app
