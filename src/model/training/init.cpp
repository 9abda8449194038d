// The seeded initialisation of the parameters.
//
// Init (deterministic in config.seed, one counter-based stream per parameter):
//   embed, pos_embed     N(0, 1), torch.nn.Embedding's default: smaller embeddings leave the
//                        first attention scores ~0 and training sits on the uniform pattern
//   linear weight, bias  nn.Linear's default, uniform in ±1/sqrt(in)
//   LayerNorm, RMSNorm   weight 1, bias 0
// Tied (GPT-2's form) or RMSNorm (Llama's), as GPT-2 starts (Radford et al. 2019; Hugging
// Face's _init_weights): every weight N(0, 0.02), W_O and the MLP's output N(0, 0.02/√(2L))
// (one per residual add), biases 0, norms as above; torch_init keeps torch.nn's defaults for
// them too
#include <cmath>

#include "model/training/backward.h"
#include "engine/error.h"
#include "engine/random.h"

namespace attnsim::model {

static bool ends_with(const std::string& s, const char* tail) {
  const std::string t(tail);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

Model init_model(const ModelConfig& config) {
  validate(config);
  Model m{config, {}};
  const std::vector<ParamSpec> specs = param_specs(config);
  for (size_t i = 0; i < specs.size(); ++i) {
    const ParamSpec& s = specs[i];
    Tensor t = Tensor::empty(s.shape);
    float* p = t.f32();
    const uint64_t stream = 1000 + i;
    const bool is_norm = s.name.find(".ln") != std::string::npos || s.name.rfind("ln_final", 0) == 0;
    if ((config.tied || config.rmsnorm) && !config.torch_init && !is_norm) {
      const bool residual_out = ends_with(s.name, "attn.W_O.weight") || ends_with(s.name, "mlp.fc2.weight");
      const float sd = ends_with(s.name, ".bias") ? 0.0f
                       : residual_out ? 0.02f / std::sqrt(2.0f * static_cast<float>(config.layers))
                                      : 0.02f;
      for (int64_t k = 0; k < t.numel(); ++k) p[k] = sd * random_normal(config.seed, stream, k);
    } else if (s.name == "embed.weight" || s.name == "pos_embed.weight") {
      for (int64_t k = 0; k < t.numel(); ++k) p[k] = random_normal(config.seed, stream, k);
    } else if (is_norm) {
      const float v = ends_with(s.name, ".weight") ? 1.0f : 0.0f;
      for (int64_t k = 0; k < t.numel(); ++k) p[k] = v;
    } else {  // a linear map's weight (out, in) or bias (out): bound from its fan-in
      const int64_t fan_in = specs[i - (ends_with(s.name, ".bias") ? 1 : 0)].shape[1];
      const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
      for (int64_t k = 0; k < t.numel(); ++k)
        p[k] = (2.0f * random_uniform(config.seed, stream, k) - 1.0f) * bound;
    }
    m.params.names.push_back(s.name);
    m.params.tensors.push_back(std::move(t));
  }
  return m;
}

}  // namespace attnsim::model
