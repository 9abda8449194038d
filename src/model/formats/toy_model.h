// The tiny transformer's parameters: named float32 tensors in param_specs() order (config.h),
// what a checkpoint holds and every pass of the toy model reads.
#pragma once

#include <string>
#include <vector>

#include "model/formats/config.h"
#include "engine/tensor.h"

namespace attnsim::model {

// Tensors in param_specs() order; grads use the same type and names.
struct Params {
  std::vector<std::string> names;
  std::vector<Tensor> tensors;

  Tensor& get(const std::string& name);
  const Tensor& get(const std::string& name) const;
  const Tensor* find(const std::string& name) const;  // nullptr when absent
};
Params zeros_like(const Params& p);

struct Model {
  ModelConfig config;
  Params params;
};
}  // namespace attnsim::model
