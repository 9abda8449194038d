// Knocking heads out of a language model, measured on held-out text three ways, because one
// number misleads (a head whose removal leaves the mean loss alone can still move many
// predictions, and mean loss hides a few tokens that get much worse):
//   Δloss      the mean next-token loss, ablated minus as trained (nats)
//   Δaccuracy  the share of targets the top-1 prediction gets right, ablated minus trained
//   KL         the mean over targets of KL(p_trained ‖ p_ablated): how far the whole
//              next-token distribution moved, whether or not the target's probability did
// Each head alone, then the "many heads can go" test: heads removed together, least important
// first (ordered by their own Δloss), a quarter, a half and three quarters of them.
#pragma once

#include <cstdint>
#include <vector>

#include "model/pass/forward.h"

namespace attnsim::model {

struct TextAblation {
  std::vector<HeadRef> heads;  // knocked out together
  double loss = 0, accuracy = 0, kl = 0;
  double dloss = 0, daccuracy = 0;  // against the trained model
};

struct TextAblationReport {
  double loss = 0, accuracy = 0;        // as trained
  int64_t tokens = 0;                   // targets scored
  std::vector<TextAblation> each;       // every head alone, in (layer, head) order
  std::vector<TextAblation> together;   // the least important 25 %, 50 %, 75 % of heads
};

// `windows`: held-out windows (text_windows); `mean`: replace a head's ctx by its mean over
// the windows instead of zeros.
TextAblationReport ablate_text(const Model& model, const Batch& windows, bool mean);
// `heads` knocked out together (zeros), against the trained model on the same windows.
TextAblation ablate_heads(const Model& model, const Batch& windows, std::vector<HeadRef> heads);

}  // namespace attnsim::model
