// Every model as a PassModel (whole_pass.h): the one whole pass runs each of them, and each
// differs only in the steps it skips. The tensors are the model's own (no copies); the
// PassModel reads the model, which must outlive it.
#pragma once

#include "model/formats/hf_model.h"
#include "model/formats/toy_model.h"
#include "model/pass/whole_pass.h"

namespace attnsim::model {

// GPT-2: LayerNorm, learned positions, GELU MLP (gelu_new), tied unembedding.
// Llama / Qwen2: RMSNorm, RoPE (pos_embed skipped), SwiGLU; blocks widened per use from F16 / BF16.
PassModel pass_model(const hf::HfModel& model);
// The toy model: norms only with layernorm, the MLP (exact GELU) only with mlp, an unembedding
// with a bias; its attention is attention_config(config, 1, T).
PassModel pass_model(const Model& model);

// The engine weights of layer l: tensors share the parameters' storage.
MhaWeights attention_weights(const Model& model, int64_t layer);
MhaConfig attention_config(const ModelConfig& config, int64_t batch, int64_t len);

}  // namespace attnsim::model
