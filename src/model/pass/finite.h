// Non-finite values in a forward pass. Finite weights can still overflow float32 (3e38 in
// W_Q gives inf scores, then NaN): every forward() refuses such a pass with an Error naming
// the first tensor, so no head table, loss or logits made of NaN reach a user with exit 0.
#pragma once

#include <string>

#include "model/pass/forward.h"

namespace attnsim::model {

// The first tensor, in forward order, holding NaN or ±inf, by its whole-pass step ("embed",
// "layer_1/alpha", "logits"), then with grads "grad of <param>"); "" when none does.
// -inf in the masked scores is by design and not counted.
std::string first_nonfinite(const Activations& acts, const Params* grads = nullptr);

}  // namespace attnsim::model
