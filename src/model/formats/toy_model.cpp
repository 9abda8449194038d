#include "model/formats/toy_model.h"

#include "engine/error.h"

namespace attnsim::model {

Tensor& Params::get(const std::string& name) {
  return const_cast<Tensor&>(static_cast<const Params&>(*this).get(name));
}

const Tensor& Params::get(const std::string& name) const {
  if (const Tensor* t = find(name)) return *t;
  throw Error("the model has no parameter '" + name + "'");
}

const Tensor* Params::find(const std::string& name) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return &tensors[i];
  return nullptr;
}

Params zeros_like(const Params& p) {
  Params z;
  z.names = p.names;
  for (const Tensor& t : p.tensors) z.tensors.push_back(Tensor::zeros(t.shape()));
  return z;
}

}  // namespace attnsim::model
