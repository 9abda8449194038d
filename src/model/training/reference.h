// The plain-loop reference of the whole model: forward, loss and backward in the most direct
// loops, templated on the scalar so that
//   double  is the oracle for finite differences (tests/test_model_grad.cpp) and
//   float   checks the fast path (BLAS, the engine's trace) op by op.
// No BLAS, no engine, no views: a reader can check each line against the math.
#pragma once

#include <vector>

#include "model/formats/config.h"
#include "model/pass/forward.h"

namespace attnsim::model {

template <class S>
struct ReferenceResult {
  S loss = 0;
  std::vector<std::vector<S>> grads;  // param_specs() order
  std::vector<S> logits;              // (B,T,V)
};

// params: one flat vector per parameter in param_specs() order.
template <class S>
ReferenceResult<S> reference_loss_and_grads(const ModelConfig& config, const std::vector<std::vector<S>>& params,
                                            const Batch& batch);

template <class S>
std::vector<std::vector<S>> params_as(const Params& p) {
  std::vector<std::vector<S>> out;
  for (const Tensor& t : p.tensors) {
    const std::vector<float> v = t.to_vector();
    out.emplace_back(v.begin(), v.end());
  }
  return out;
}

}  // namespace attnsim::model
