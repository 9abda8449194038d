// SamplingView: the live sampling chart of a model view. It keeps the last position's logits
// of the run on screen (WholeRun::last_logits) and, on every change of temperature, top-k,
// top-p or seed, calls model::sampling_trace on them again: only the four sampling steps
// (probs top_k top_p next_token), never the pass, so a control change fits in a frame.
//
// What the chart shows (chart()):
//   bars     the `shown` most likely tokens under `probs` (softmax at the temperature; at
//            temperature 1 when greedy), most likely first, ties by the lowest id; the chosen
//            token is added last when it is not among them, then a lesson's marked one
//   kept     a token top_p keeps (top_p > 0); greedy keeps the arg max alone
//   chosen   next_token: the arg max (greedy) or the seeded draw from top_p
//
// No OpenGL: tested without a window.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/trace.h"
#include "model/pass/sampling.h"

namespace attnsim::app {

struct SamplingBar {
  int32_t token = 0;
  float prob = 0;  // under probs
  bool kept = false;
  bool chosen = false;
  bool marked = false;  // the bar a lesson step names (highlight.bar)
};

struct SamplingChart {
  model::SamplingOptions options;
  std::vector<SamplingBar> bars;
  int32_t next = 0;
  int64_t kept_count = 0;   // tokens top_p keeps (greedy: 1)
  double kept_mass = 0;     // their total under probs
  int64_t vocab = 0;
};

class SamplingView {
 public:
  // New logits (1,1,V): keeps the options, recomputes the sampling steps.
  void set_logits(Tensor last_logits);
  // Throws Error (model::validate_sampling's line) and keeps the old options on a bad one.
  void set_options(const model::SamplingOptions& options);
  const model::SamplingOptions& options() const { return options_; }
  bool ready() const { return logits_.defined(); }
  double compute_ms() const { return compute_ms_; }  // the last sampling_trace call
  uint64_t revision() const { return revision_; }  // bumped by every recompute
  // The `shown` most likely tokens, the chosen one, and `marked` (-1: none) whatever its rank.
  SamplingChart chart(int64_t shown = 12, int32_t marked = -1) const;

 private:
  void recompute();
  Tensor logits_;
  model::SamplingOptions options_;
  Trace trace_;  // probs top_k top_p next_token
  double compute_ms_ = 0;
  uint64_t revision_ = 0;
};

}  // namespace attnsim::app
