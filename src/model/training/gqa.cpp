#include "model/training/gqa.h"

#include <string>

#include "engine/error.h"

namespace attnsim::model {

namespace {

// rows (g0·dk, cols) -> (g·dk, cols): block j is the mean of blocks j·s .. j·s + s − 1.
// A bias is the cols = 1 case. Summed in double so that s = 1 copies the bits.
Tensor mean_pool_heads(const Tensor& w, int64_t g0, int64_t g, int64_t dk) {
  const int64_t cols = w.numel() / (g0 * dk), s = g0 / g;
  Dims shape = w.shape();
  shape[0] = g * dk;
  Tensor out = Tensor::empty(shape);
  const float* in = w.f32();
  float* o = out.f32();
  for (int64_t j = 0; j < g; ++j)
    for (int64_t e = 0; e < dk * cols; ++e) {
      double sum = 0;
      for (int64_t m = 0; m < s; ++m) sum += in[((j * s + m) * dk) * cols + e];
      o[(j * dk) * cols + e] = static_cast<float>(sum / static_cast<double>(s));
    }
  return out;
}

bool is_kv_projection(const std::string& name) {
  return name.find(".attn.W_K.") != std::string::npos || name.find(".attn.W_V.") != std::string::npos;
}

}  // namespace

Model convert_to_gqa(const Model& model, int64_t g) {
  const ModelConfig& c = model.config;
  const int64_t g0 = c.kv_group_count();
  if (g < 1 || g > g0 || g0 % g != 0)
    throw Error("kv-heads " + std::to_string(g) + " must divide the model's " + std::to_string(g0) +
                " key/value heads (" + std::to_string(c.heads) + " query heads): each new head is the mean of a whole group");
  Model out;
  out.config = c;
  out.config.kv_heads = g;
  validate(out.config);
  for (size_t i = 0; i < model.params.names.size(); ++i) {
    const std::string& name = model.params.names[i];
    const Tensor& t = model.params.tensors[i];
    out.params.names.push_back(name);
    out.params.tensors.push_back(is_kv_projection(name) ? mean_pool_heads(t, g0, g, c.head_dim()) : t.clone());
  }
  return out;
}

}  // namespace attnsim::model
