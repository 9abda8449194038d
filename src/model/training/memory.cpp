#include "model/training/memory.h"

#include <algorithm>
#include <limits>

#include "model/formats/checkpoint.h"
#include "model/training/heads.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/mha.h"

namespace attnsim::model {

namespace {

// Sums that saturate: a prediction past int64 is simply "too much".
int64_t add(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() / 2 - b ? std::numeric_limits<int64_t>::max() / 2 : a + b;
}

}  // namespace

int64_t predict_report_bytes(const ModelConfig& c) {
  // the scoring forward, then evaluate_repeats' 256 full-length sequences (one repeat length at
  // a time; evaluate_task's for recall / gist are as many). Counted as a sum, not the larger one: measured at vocab 16384 the peak held both
  // (1.14 GB resident for 0.88 GiB predicted as a max, 1.03 GiB as the sum)
  return add(checkpoint_bytes(c), add(predict_scoring_bytes(c), predict_forward_bytes(c, 256, c.seq_len)));
}

int64_t predict_ablation_bytes(const ModelConfig& c) {
  const int64_t fwd = predict_forward_bytes(c, 128, c.seq_len);  // ablation_batch
  return add(checkpoint_bytes(c), add(fwd, fwd));
}


}  // namespace attnsim::model
