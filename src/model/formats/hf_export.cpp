#include "model/formats/hf_export.h"

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/atomic_file.h"
#include "engine/error.h"
#include "engine/half.h"
#include "engine/read_file.h"
#include "model/text/hf_tokenizer.h"

namespace attnsim::model::hf {

namespace {

// (out, in) nn.Linear -> (in, out) Conv1D, as contiguous float32.
Tensor transposed(const Tensor& w) { return w.transpose(0, 1).contiguous(); }

// Rows of several (out_i, in) weights side by side as one (in, Σ out_i) Conv1D weight.
Tensor side_by_side(const std::vector<Tensor>& ws) {
  const int64_t in = ws[0].size(1);
  int64_t out = 0;
  for (const Tensor& w : ws) out += w.size(0);
  Tensor r = Tensor::empty({in, out});
  int64_t col = 0;
  for (const Tensor& w : ws) {
    const Tensor t = transposed(w);  // (in, out_i)
    for (int64_t i = 0; i < in; ++i)
      std::memcpy(r.f32() + i * out + col, t.f32() + i * w.size(0), static_cast<size_t>(w.size(0)) * 4);
    col += w.size(0);
  }
  return r;
}

Tensor concatenated(const std::vector<Tensor>& bs) {
  int64_t n = 0;
  for (const Tensor& b : bs) n += b.numel();
  Tensor r = Tensor::empty({n});
  int64_t at = 0;
  for (const Tensor& b : bs) {
    std::memcpy(r.f32() + at, b.contiguous().f32(), static_cast<size_t>(b.numel()) * 4);
    at += b.numel();
  }
  return r;
}

// One safetensors file: 8-byte header length, the JSON header (padded with spaces to 8 bytes,
// as the format's writers do), the tensors' bytes in order.
std::string safetensors(const std::vector<std::pair<std::string, Tensor>>& tensors, bool f16) {
  nlohmann::ordered_json header = {{"__metadata__", {{"format", "pt"}}}};
  const int64_t width = f16 ? 2 : 4;
  int64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const int64_t bytes = t.numel() * width;
    header[name] = {{"dtype", f16 ? "F16" : "F32"}, {"shape", t.shape()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  out += text;
  for (const auto& [name, t] : tensors) {
    const Tensor c = t.contiguous();
    if (!f16) {
      out.append(reinterpret_cast<const char*>(c.f32()), static_cast<size_t>(c.numel()) * 4);
      continue;
    }
    for (int64_t i = 0; i < c.numel(); ++i) {  // little-endian, as safetensors stores every dtype
      const uint16_t h = float_to_half_bits(c.f32()[i]);
      out += static_cast<char>(h & 0xff);
      out += static_cast<char>(h >> 8);
    }
  }
  return out;
}

void check_gpt2_form(const ModelConfig& c) {
  std::string lacks;
  if (!c.layernorm) lacks += ", LayerNorm";
  if (!c.mlp) lacks += ", the MLP";
  if (!c.bias) lacks += ", biases";
  if (!c.tied) lacks += ", a tied unembedding";
  if (c.kv_group_count() != c.heads) lacks += ", one K/V head per head";
  if (!lacks.empty())
    throw Error("a Hugging Face GPT-2 folder needs GPT-2's form; this checkpoint lacks " + lacks.substr(2) +
                " (train with --layernorm --mlp --tied)");
}

void check_llama_form(const ModelConfig& c) {
  std::string lacks;
  if (!c.rope()) lacks += ", rotary positions";
  if (!c.mlp || !c.swiglu) lacks += ", a SwiGLU MLP";
  if (c.bias) lacks += ", linear maps without biases";
  if (!lacks.empty())
    throw Error("a Hugging Face Llama folder needs Llama's form; this checkpoint lacks " + lacks.substr(2) +
                " (train with --rmsnorm --rope 10000 --mlp --swiglu --no-bias)");
}

using Named = std::vector<std::pair<std::string, Tensor>>;

void gpt2_folder(const ModelConfig& c, const Params& P, bool f16, Named& t, nlohmann::ordered_json& config) {
  check_gpt2_form(c);
  t = {{"wte.weight", P.get("embed.weight")}, {"wpe.weight", P.get("pos_embed.weight")}};
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".", h = "h." + std::to_string(l) + ".";
    auto w = [&](const std::string& name) { return P.get(p + name); };
    t.push_back({h + "ln_1.weight", w("ln.weight")});
    t.push_back({h + "ln_1.bias", w("ln.bias")});
    t.push_back({h + "attn.c_attn.weight", side_by_side({w("attn.W_Q.weight"), w("attn.W_K.weight"), w("attn.W_V.weight")})});
    t.push_back({h + "attn.c_attn.bias", concatenated({w("attn.W_Q.bias"), w("attn.W_K.bias"), w("attn.W_V.bias")})});
    t.push_back({h + "attn.c_proj.weight", transposed(w("attn.W_O.weight"))});
    t.push_back({h + "attn.c_proj.bias", w("attn.W_O.bias")});
    t.push_back({h + "ln_2.weight", w("ln2.weight")});
    t.push_back({h + "ln_2.bias", w("ln2.bias")});
    t.push_back({h + "mlp.c_fc.weight", transposed(w("mlp.fc1.weight"))});
    t.push_back({h + "mlp.c_fc.bias", w("mlp.fc1.bias")});
    t.push_back({h + "mlp.c_proj.weight", transposed(w("mlp.fc2.weight"))});
    t.push_back({h + "mlp.c_proj.bias", w("mlp.fc2.bias")});
  }
  t.push_back({"ln_f.weight", P.get("ln_final.weight")});
  t.push_back({"ln_f.bias", P.get("ln_final.bias")});
  config = {{"model_type", "gpt2"},
                                         {"architectures", {"GPT2LMHeadModel"}},
                                         {"vocab_size", c.vocab},
                                         {"n_positions", c.seq_len},
                                         {"n_ctx", c.seq_len},
                                         {"n_embd", c.d_model},
                                         {"n_layer", c.layers},
                                         {"n_head", c.heads},
                                         {"n_inner", c.mlp_dim()},
                                         {"activation_function", "gelu"},
                                         {"layer_norm_epsilon", 1e-5},
                                         {"resid_pdrop", 0.0},
                                         {"embd_pdrop", 0.0},
                                         {"attn_pdrop", 0.0},
                                         {"tie_word_embeddings", true},
                                         {"torch_dtype", f16 ? "float16" : "float32"}};
}

void llama_folder(const ModelConfig& c, const Params& P, bool f16, Named& t, nlohmann::ordered_json& config) {
  check_llama_form(c);
  t = {{"model.embed_tokens.weight", P.get("embed.weight")}};
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".", h = "model.layers." + std::to_string(l) + ".";
    auto w = [&](const std::string& name) { return P.get(p + name); };
    t.push_back({h + "input_layernorm.weight", w("ln.weight")});
    t.push_back({h + "self_attn.q_proj.weight", w("attn.W_Q.weight")});
    t.push_back({h + "self_attn.k_proj.weight", w("attn.W_K.weight")});
    t.push_back({h + "self_attn.v_proj.weight", w("attn.W_V.weight")});
    t.push_back({h + "self_attn.o_proj.weight", w("attn.W_O.weight")});
    t.push_back({h + "post_attention_layernorm.weight", w("ln2.weight")});
    t.push_back({h + "mlp.gate_proj.weight", w("mlp.gate.weight")});
    t.push_back({h + "mlp.up_proj.weight", w("mlp.fc1.weight")});
    t.push_back({h + "mlp.down_proj.weight", w("mlp.fc2.weight")});
  }
  t.push_back({"model.norm.weight", P.get("ln_final.weight")});
  if (!c.tied) t.push_back({"lm_head.weight", P.get("unembed.weight")});
  config = {{"model_type", "llama"},
            {"architectures", {"LlamaForCausalLM"}},
            {"vocab_size", c.vocab},
            {"hidden_size", c.d_model},
            {"intermediate_size", c.mlp_dim()},
            {"num_hidden_layers", c.layers},
            {"num_attention_heads", c.heads},
            {"num_key_value_heads", c.kv_group_count()},
            {"max_position_embeddings", c.seq_len},
            {"rms_norm_eps", 1e-5},
            {"rope_theta", c.rope_theta},
            {"hidden_act", "silu"},
            {"attention_bias", false},
            {"mlp_bias", false},
            {"tie_word_embeddings", c.tied},
            {"torch_dtype", f16 ? "float16" : "float32"}};
}

}  // namespace

void export_hf(const Model& model, const std::string& dir, const std::string& tokenizer_dir, bool force, bool f16) {
  const ModelConfig& c = model.config;
  Named t;
  nlohmann::ordered_json config;
  if (c.rmsnorm) llama_folder(c, model.params, f16, t, config);
  else gpt2_folder(c, model.params, f16, t, config);
  std::vector<std::string> tokenizer_files;
  if (!tokenizer_dir.empty()) {
    const Tokenizer tok = load_tokenizer(tokenizer_dir);  // Error when it does not load
    if (tok.vocab_size() > c.vocab)
      throw Error(tokenizer_dir + ": the tokenizer has " + std::to_string(tok.vocab_size()) + " tokens, the model " +
                  std::to_string(c.vocab));
    for (const char* f : {"tokenizer.json", "vocab.json", "merges.txt"})
      if (std::filesystem::exists(std::filesystem::path(tokenizer_dir) / f)) tokenizer_files.push_back(f);
  }
  write_folder_atomically(dir, [&](const std::string& tmp) {
    write_file_atomically(tmp + "/config.json", config.dump(2) + "\n");
    write_file_atomically(tmp + "/model.safetensors", safetensors(t, f16));
    for (const std::string& f : tokenizer_files)
      write_file_atomically(tmp + "/" + f, read_text_file(tokenizer_dir + "/" + f, kMaxTokenizerBytes));
  }, force);
}

}  // namespace attnsim::model::hf
