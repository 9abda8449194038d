// A Hugging Face GPT-2 or Llama-family model, read from its folder, every layer's attention
// the engine's forward() (causal mask, the named trace with q_rot / k_rot under RoPE).
//
//   GPT-2 (modeling_gpt2.py):   x = wte[tok] + wpe[pos]
//                                x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))    mlp = c_proj(gelu_new(c_fc(x)))
//                                logits = ln_f(x) · wteᵀ                          (tied)
//   Llama / Qwen2 (modeling_llama.py, modeling_qwen2.py):
//                                x = embed_tokens[tok]                            (positions: RoPE in attention)
//                                x = x + attn(rms(x));  x = x + mlp(rms(x))      mlp = down(silu(gate(x)) ⊙ up(x))
//                                logits = norm(x) · lm_headᵀ                      (lm_head = embed_tokens when tied)
// Weights are torch.nn.Linear's (out, in), float32. GPT-2's Conv1D weights are (in, out):
// c_attn (d, 3d) is split into W_Q, W_K, W_V, each a transpose view of its columns
// (strides (1, 3d)), which the engine's linear reads in place.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/fits.h"
#include "engine/mha.h"
#include "model/formats/hf_config.h"

namespace attnsim::model::hf {

struct HfLayer {
  Tensor norm1_w, norm1_b;  // ln_1 / input_layernorm (d); bias GPT-2 only
  MhaWeights attn;          // W_Q (d,d) W_K W_V (g·dk,d) W_O (d,d); a bias undefined = none
  Tensor norm2_w, norm2_b;  // ln_2 / post_attention_layernorm
  Linear fc, proj;          // GPT-2: c_fc (ff,d), c_proj (d,ff)
  Linear gate, up, down;    // Llama: gate_proj, up_proj (ff,d), down_proj (d,ff)
};

class SafetensorsSet;  // hf_safetensors.h

// Files in F32 are read into float32 at load. Files holding F16 or BF16 are kept mapped and
// each layer is widened to float32 when it runs (layer()), so a half-precision model holds
// its file plus one layer, not twice its size; the embeddings and final norm are widened at
// load either way.
//
// Weights packed once (engine/packed_weights.h): when the build packs (packing_available())
// and the layers are kept in float32, load_hf_model packs every Linear of every layer and the
// unembedding once (Linear::packed, unembed_packed), and the forward, decode and whole pass
// run their products on the packed copies. The float32 weight is then dropped where nothing
// reads it but the product (W_Q, W_K, W_V, the MLP's), and kept where a view reads it: W_O
// (the lens's per-head direct logit attribution) and the unembedding (it is the embedding
// when tied; the lens reads its rows). Half-precision models are not packed: packing would
// hold every layer in float32, which their per-layer widening exists to avoid.
struct HfModel {
  HfConfig config;
  std::string dir;
  Tensor embed;              // (V,d) wte / embed_tokens
  Tensor pos_embed;          // (P,d) wpe; GPT-2 only
  Tensor norm_f_w, norm_f_b; // ln_f / norm (d)
  Tensor unembed;            // (V,d): the embedding itself when tied
  std::vector<HfLayer> layers;                   // float32 at load; empty when widened per use
  std::shared_ptr<const SafetensorsSet> source;  // the mapped files, when widened per use
  std::string prefix;                            // of the tensor names: "", "transformer.", "model."
  std::shared_ptr<const PackedWeight> unembed_packed;  // the unembedding packed once, or null
  int64_t packed_bytes = 0;                      // what every packed copy holds

  // Layer l as float32: the loaded one, or one widened now from the mapped file (checked at
  // load, so this does not fail on a file that has not changed since).
  HfLayer layer(int64_t l) const;
  bool widened_per_layer() const { return layers.empty() && config.layers > 0; }
};

// Bytes load_hf_model holds, from config.json and the safetensors headers alone: every
// float32 parameter once, or with F16 / BF16 files the widened embeddings, one widened layer
// and the files' bytes; with packing, the packed copies less the float32 weights dropped,
// and the one layer read but not yet packed at load's peak.
int64_t predict_hf_model_bytes(const std::string& dir);
// That figure in its parts: the parameters (float32, or the files + widened embeddings and
// one layer), the packed copies (every layer's Linears and the unembedding; 0 when nothing is
// packed), the float32 weights dropped for them, and at load's peak the one layer read whole
// plus the row-major copy of the weight being packed.
struct HfModelBytes {
  int64_t params = 0, packed = 0, dropped = 0, transient = 0;
  int64_t total() const { return params + packed + transient - dropped; }
};
HfModelBytes predict_hf_model_memory(const std::string& dir);
// The same before the files exist (a download checks it before any weight byte): from the
// config and the weight files' total size. The dtypes are not known yet, so the larger of the
// two cases above.
int64_t predict_hf_model_bytes(const HfConfig& config, int64_t weight_file_bytes);
// A download's check before its first weight byte (src/hub's HubOptions::check_weights):
// config.json's text must be a config attnsim runs, and the model must fit under mem_limit
// (0 = the default). Throws Error "loading NAME as float32 (...) needs about ..., over ...".
void check_hf_download(const std::string& name, const std::string& config_json, int64_t weight_file_bytes, int64_t mem_limit);
// Reads config.json and the safetensors, checking every name and shape the config implies.
// Throws Error naming the file, the tensor and the problem; `mem_limit` 0 = the default limit.
HfModel load_hf_model(const std::string& dir, int64_t mem_limit = 0);
// load_hf_model after checking that the parameters + `command_bytes` fit under mem_limit
// (0 = the default): refused with the figures ("WHAT needs about ...", memory.h check_fits)
// before any tensor is read.
HfModel load_hf_checked(const std::string& dir, int64_t command_bytes, int64_t mem_limit, const std::string& what);

// The engine config of one layer's attention on one sequence of T tokens starting at
// position0: causal, RoPE when the family has it, GQA through kv_heads.
MhaConfig hf_attention_config(const HfConfig& config, int64_t T, int64_t position0 = 0);

}  // namespace attnsim::model::hf
