// The tiny transformer's training side: the seeded initialisation (init.cpp), the memory of one
// training step, and the hand-written backward of forward.h's pass (backward.cpp).
#pragma once

#include <cstdint>

#include "model/pass/forward.h"

namespace attnsim::model {

// torch.nn's default initialisation (init.cpp), deterministic in config.seed.
Model init_model(const ModelConfig& config);

// Bytes one forward + backward of `batch` sequences of length `len` will hold (activations,
// traces, gradients, optimiser state), computed before anything is allocated.
int64_t predict_training_bytes(const ModelConfig& config, int64_t batch, int64_t len);
// Accumulates (+=) d(mean loss)/d(param) into grads (zeros_like(params) to start).
void backward(const Model& model, const Batch& batch, const Activations& acts, const Tensor& dlogits,
              Params& grads);

}  // namespace attnsim::model
