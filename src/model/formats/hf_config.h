// config.json of a Hugging Face model folder, for the two families attnsim runs:
//   GPT-2 (model_type "gpt2": gpt2, distilgpt2, gpt2-medium, ...): n_embd, n_head, n_layer,
//     n_positions, vocab_size, layer_norm_epsilon, n_inner (null = 4·n_embd), gelu_new.
//   Llama (model_type "llama": Llama, TinyLlama, SmolLM; "qwen2": Qwen2 with q/k/v biases):
//     hidden_size, num_attention_heads, num_key_value_heads, intermediate_size, rms_norm_eps,
//     rope_theta, tie_word_embeddings, max_position_embeddings, num_hidden_layers.
// Every field the forward pass depends on is checked: a config that lies (0 heads, a width
// that heads do not divide, kv heads that do not divide the heads, a head_dim other than
// hidden/heads, rope_scaling, an unknown model_type) is one Error naming the field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/rope.h"

namespace attnsim::model::hf {

enum class Family { Gpt2, Llama };

struct HfConfig {
  Family family = Family::Gpt2;
  std::string model_type;     // "gpt2", "llama", "qwen2"
  int64_t d_model = 0;        // n_embd / hidden_size
  int64_t heads = 0;          // n_head / num_attention_heads
  int64_t kv_heads = 0;       // num_key_value_heads (GPT-2: heads)
  int64_t layers = 0;         // n_layer / num_hidden_layers
  int64_t vocab = 0;          // vocab_size
  int64_t max_positions = 0;  // n_positions / max_position_embeddings
  int64_t d_ff = 0;           // n_inner (4·n_embd) / intermediate_size
  double norm_eps = 1e-5;     // layer_norm_epsilon / rms_norm_eps
  double rope_theta = 0;      // Llama: rope_theta (10000 when absent); GPT-2: 0 (learned positions)
  RopeScaling rope_scaling;   // rope_scaling of type "llama3" (Llama 3.1, 3.2); factor 0 = none
  bool tied = true;           // the unembedding is the token embedding (GPT-2 always)
  bool qkv_bias = true;       // GPT-2, Qwen2: q/k/v projections have a bias
  bool o_bias = true;         // GPT-2: the output projection has a bias
  bool mlp_bias = true;       // GPT-2: c_fc, c_proj biases; Llama: mlp_bias
  bool gelu_tanh = true;      // GPT-2: gelu_new (tanh); false: the exact erf GELU ("gelu")
  int64_t bos = -1;           // bos_token_id, -1 when absent

  int64_t head_dim() const { return d_model / heads; }
};

// Throws Error "WHAT: ..." naming the field and its value.
HfConfig parse_hf_config(const nlohmann::json& j, const std::string& what);
HfConfig read_hf_config(const std::string& dir);  // DIR/config.json

// A folder that holds config.json and model.safetensors (or its index): a Hugging Face model,
// not an attnsim checkpoint (model.json).
bool is_hf_model_dir(const std::string& dir);

}  // namespace attnsim::model::hf
