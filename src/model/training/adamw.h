// AdamW (Loshchilov & Hutter) exactly as torch.optim.AdamW steps it, with linear warm-up,
// cosine decay and global-norm gradient clipping (torch.nn.utils.clip_grad_norm_).
//   p ← p·(1 − lr·wd)                      decay only on matrices (dim ≥ 2), not biases/LN
//   m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²
//   p ← p − lr · (m / (1−β1ᵗ)) / (sqrt(v / (1−β2ᵗ)) + ε)
#pragma once

#include <cstdint>

#include "engine/checked.h"
#include "model/formats/toy_model.h"

namespace attnsim::model {

struct AdamWConfig {
  float lr = 1e-3f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float weight_decay = 0.01f;
  int64_t warmup = 100;       // steps of linear warm-up from lr/warmup to lr
  int64_t total = 0;          // cosine decay to min_ratio·lr at step `total` (0 = constant)
  float min_ratio = 0.1f;
  float clip = 1.0f;          // max global gradient norm; 0 = no clipping
};

// The one set of rules for the settings a user or a checkpoint's recipe gives: the CLI's
// options check them at parse time, recipe_options() and train() with validate() below.
// A learning rate above 1 or a decay above 1 (p·(1 − lr·wd) flips sign past lr·wd = 1) only
// ever diverges on this model; a negative one ascends the loss.
inline constexpr RealRange kLrRange{0.0, 1.0, true};
inline constexpr RealRange kWeightDecayRange{0.0, 1.0};
inline constexpr RealRange kClipRange{0.0, 1e6};  // 0 = no clipping
inline constexpr int64_t kMaxWarmup = 10'000'000;  // as the longest run (train --steps)
// Error naming the first setting out of its range ("lr -1 is out of range (above 0, ...)").
void validate(const AdamWConfig& config);

float learning_rate(const AdamWConfig& c, int64_t step);  // step counts from 0

class AdamW {
 public:
  AdamW(const Params& params, AdamWConfig config);
  // Clips grads in place (returns the norm before clipping), then updates params.
  double step(Params& params, Params& grads);
  int64_t steps_taken() const { return t_; }

 private:
  AdamWConfig c_;
  Params m_, v_;
  int64_t t_ = 0;
};

// sqrt(Σ g²) over every gradient, accumulated in double in parameter order.
double global_norm(const Params& grads);

}  // namespace attnsim::model
