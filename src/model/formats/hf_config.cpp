#include "model/formats/hf_config.h"

#include <cmath>
#include <filesystem>

#include "engine/error.h"
#include "engine/nesting.h"
#include "engine/read_file.h"

namespace attnsim::model::hf {

namespace {

constexpr int64_t kMaxConfigBytes = int64_t{4} << 20;  // real ones are ~1 KB
constexpr int64_t kMaxSize = int64_t{1} << 24;         // any one size field; real models are far below

// A field that must be a whole number in [lo, kMaxSize]; `fallback` when absent (-1: required).
int64_t size_field(const nlohmann::json& j, const char* key, int64_t fallback, int64_t lo, const std::string& what) {
  if (!j.contains(key) || j[key].is_null()) {
    if (fallback < 0) throw Error(what + ": \"" + key + "\" is missing");
    return fallback;
  }
  const nlohmann::json& v = j[key];
  if (!v.is_number_integer() && !v.is_number_unsigned())
    throw Error(what + ": \"" + key + "\" must be a whole number, got " + one_line(v.dump().substr(0, 40)));
  if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(kMaxSize)
                             : (v.get<int64_t>() < lo || v.get<int64_t>() > kMaxSize))
    throw Error(what + ": \"" + key + "\" = " + v.dump() + " is out of range (" + std::to_string(lo) + " to " +
                std::to_string(kMaxSize) + ")");
  return v.get<int64_t>();
}

double real_field(const nlohmann::json& j, const char* key, double fallback, const std::string& what) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  const nlohmann::json& v = j[key];
  if (!v.is_number()) throw Error(what + ": \"" + key + "\" must be a number, got " + one_line(v.dump().substr(0, 40)));
  const double d = v.get<double>();
  if (!(d > 0) || !std::isfinite(d)) throw Error(what + ": \"" + key + "\" = " + v.dump() + " must be a positive number");
  return d;
}

bool bool_field(const nlohmann::json& j, const char* key, bool fallback, const std::string& what) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean()) throw Error(what + ": \"" + key + "\" must be true or false, got " + one_line(j[key].dump().substr(0, 40)));
  return j[key].get<bool>();
}

std::string string_field(const nlohmann::json& j, const char* key, const std::string& fallback, const std::string& what) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_string()) throw Error(what + ": \"" + key + "\" must be a string");
  return j[key].get<std::string>();
}

void parse_gpt2(const nlohmann::json& j, HfConfig& c, const std::string& what) {
  c.family = Family::Gpt2;
  c.d_model = size_field(j, "n_embd", -1, 0, what);
  c.heads = size_field(j, "n_head", -1, 0, what);
  c.layers = size_field(j, "n_layer", -1, 0, what);
  c.vocab = size_field(j, "vocab_size", -1, 0, what);
  c.max_positions = size_field(j, "n_positions", 1024, 0, what);
  c.d_ff = size_field(j, "n_inner", 4 * c.d_model, 0, what);
  c.norm_eps = real_field(j, "layer_norm_epsilon", 1e-5, what);
  c.kv_heads = c.heads;
  c.tied = true;
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  const std::string act = string_field(j, "activation_function", "gelu_new", what);
  if (act == "gelu_new" || act == "gelu_pytorch_tanh") c.gelu_tanh = true;
  else if (act == "gelu") c.gelu_tanh = false;
  else throw Error(what + ": activation_function \"" + one_line(act) + "\" is not supported (gelu_new, gelu)");
  if (!bool_field(j, "scale_attn_weights", true, what))
    throw Error(what + ": scale_attn_weights false (no 1/sqrt(d_k)) is not supported");
  if (bool_field(j, "scale_attn_by_inverse_layer_idx", false, what))
    throw Error(what + ": scale_attn_by_inverse_layer_idx is not supported");
  if (bool_field(j, "add_cross_attention", false, what)) throw Error(what + ": add_cross_attention is not supported");
}

void parse_llama(const nlohmann::json& j, HfConfig& c, const std::string& what) {
  c.family = Family::Llama;
  c.d_model = size_field(j, "hidden_size", -1, 0, what);
  c.heads = size_field(j, "num_attention_heads", -1, 0, what);
  c.layers = size_field(j, "num_hidden_layers", -1, 0, what);
  c.vocab = size_field(j, "vocab_size", -1, 0, what);
  c.max_positions = size_field(j, "max_position_embeddings", 2048, 0, what);
  c.d_ff = size_field(j, "intermediate_size", -1, 0, what);
  c.kv_heads = size_field(j, "num_key_value_heads", c.heads, 0, what);
  c.norm_eps = real_field(j, "rms_norm_eps", 1e-6, what);
  c.rope_theta = real_field(j, "rope_theta", 10000.0, what);
  // The rotation of pair i turns by θ^(−2i/d_k) per position: at θ ≤ 1 the slowest pair turns
  // fastest, and a tiny θ (1e-300) overflows the angle. Real models use 10,000 to 1,000,000.
  if (!(c.rope_theta > 1) || c.rope_theta > 1e30)
    throw Error(what + ": rope_theta " + one_line(j.at("rope_theta").dump()) +
                " is outside what RoPE can use (above 1 and at most 1e30; Llama 2 has 10000, Llama 3 500000)");
  c.tied = bool_field(j, "tie_word_embeddings", false, what);
  const bool qwen2 = c.model_type == "qwen2";
  const bool attention_bias = bool_field(j, "attention_bias", false, what);  // llama: q/k/v/o all or none
  c.qkv_bias = qwen2 || attention_bias;
  c.o_bias = !qwen2 && attention_bias;
  c.mlp_bias = bool_field(j, "mlp_bias", false, what);
  const std::string act = string_field(j, "hidden_act", "silu", what);
  if (act != "silu") throw Error(what + ": hidden_act \"" + one_line(act) + "\" is not supported (silu: SwiGLU)");
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) {
    const nlohmann::json& rs = j["rope_scaling"];
    const std::string type = rs.is_object() ? string_field(rs, "rope_type", string_field(rs, "type", "?", what), what) : "?";
    if (type == "llama3") {
      c.rope_scaling.factor = real_field(rs, "factor", -1, what + " rope_scaling");
      c.rope_scaling.low_freq_factor = real_field(rs, "low_freq_factor", 1, what + " rope_scaling");
      c.rope_scaling.high_freq_factor = real_field(rs, "high_freq_factor", 4, what + " rope_scaling");
      c.rope_scaling.original_max = real_field(rs, "original_max_position_embeddings", 8192, what + " rope_scaling");
      if (c.rope_scaling.factor <= 0) throw Error(what + ": rope_scaling llama3 needs a positive \"factor\"");
      if (!(c.rope_scaling.high_freq_factor > c.rope_scaling.low_freq_factor))
        throw Error(what + ": rope_scaling llama3 needs high_freq_factor > low_freq_factor");
    } else if (type != "default") {
      throw Error(what + ": rope_scaling \"" + one_line(type) + "\" is not supported (plain RoPE and llama3 only)");
    }
  }
  if (qwen2 && bool_field(j, "use_sliding_window", false, what))
    throw Error(what + ": use_sliding_window is not supported (full causal attention only)");
  if (j.contains("head_dim") && !j["head_dim"].is_null() && c.heads > 0) {
    const int64_t hd = size_field(j, "head_dim", -1, 1, what);
    if (hd * c.heads != c.d_model)
      throw Error(what + ": head_dim " + std::to_string(hd) + " is not hidden_size / num_attention_heads = " +
                  std::to_string(c.d_model) + " / " + std::to_string(c.heads) + "; attnsim needs d = h·d_k");
  }
}

}  // namespace

HfConfig parse_hf_config(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) throw Error(what + ": must be a JSON object");
  HfConfig c;
  c.model_type = string_field(j, "model_type", "", what);
  if (c.model_type == "gpt2") parse_gpt2(j, c, what);
  else if (c.model_type == "llama" || c.model_type == "qwen2") parse_llama(j, c, what);
  else
    throw Error(what + ": model_type \"" + one_line(c.model_type) + "\" is not supported (gpt2, llama, qwen2)");
  const std::string heads = c.family == Family::Gpt2 ? "n_head" : "num_attention_heads";
  const std::string width = c.family == Family::Gpt2 ? "n_embd" : "hidden_size";
  auto positive = [&](int64_t v, const std::string& key) {
    if (v <= 0) throw Error(what + ": \"" + key + "\" is " + std::to_string(v) + "; it must be positive");
  };
  positive(c.d_model, width);
  positive(c.heads, heads);
  positive(c.layers, c.family == Family::Gpt2 ? "n_layer" : "num_hidden_layers");
  positive(c.vocab, "vocab_size");
  positive(c.max_positions, c.family == Family::Gpt2 ? "n_positions" : "max_position_embeddings");
  positive(c.d_ff, c.family == Family::Gpt2 ? "n_inner" : "intermediate_size");
  positive(c.kv_heads, "num_key_value_heads");
  if (c.d_model % c.heads != 0)
    throw Error(what + ": " + width + " " + std::to_string(c.d_model) + " is not divisible by " + heads + " " +
                std::to_string(c.heads) + ": d_k = d / h must be whole");
  if (c.heads % c.kv_heads != 0)
    throw Error(what + ": num_key_value_heads " + std::to_string(c.kv_heads) + " does not divide num_attention_heads " +
                std::to_string(c.heads) + ": each key/value head serves a whole group of query heads");
  if (c.rope_theta > 0 && c.head_dim() % 2 != 0)
    throw Error(what + ": head dimension " + std::to_string(c.head_dim()) + " is odd; RoPE pairs dimensions");
  if (j.contains("bos_token_id") && j["bos_token_id"].is_number_integer()) {
    const int64_t b = j["bos_token_id"].get<int64_t>();
    if (b < 0 || b >= c.vocab)
      throw Error(what + ": bos_token_id " + std::to_string(b) + " is not a token id of the model (vocab_size " +
                  std::to_string(c.vocab) + ")");
    c.bos = b;
  }
  return c;
}

HfConfig read_hf_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  return parse_hf_config(parse_json(read_text_file(path, kMaxConfigBytes), path), path);
}

bool is_hf_model_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  return fs::is_regular_file(dir + "/config.json", ec) && !fs::exists(dir + "/model.json", ec) &&
         (fs::exists(dir + "/model.safetensors", ec) || fs::exists(dir + "/model.safetensors.index.json", ec));
}

}  // namespace attnsim::model::hf
