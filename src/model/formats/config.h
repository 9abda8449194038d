// The tiny transformer's shape and the names of its parameters.
//
//   tokens (B,T) int ──embed.weight (V,d)──┐
//                      pos_embed.weight (T,d)──+──> x0 (B,T,d)   (no pos_embed under RoPE)
//   for each layer l:                       the residual stream, (B,T,d)
//     a  = attn(ln? (x))                    the engine's forward, causal mask; W_K, W_V are
//                                           (g·dk, d): g = kv_heads K/V heads (GQA when g < h);
//                                           under RoPE q and k turn by position (q_rot, k_rot)
//     x  = x + a
//     x  = x + mlp(ln2(x))                  optional (off by default: attention-only):
//                                           fc2(gelu(fc1 h)), or SwiGLU fc2(silu(gate h) ⊙ fc1 h)
//   logits = unembed(ln_final? (x))         (B,T,V), nn.Linear(d, V) layout; tied (GPT-2's
//                                           form): x · embed.weightᵀ, no unembed parameters
//
// Two forms have names: GPT-2's (--layernorm --mlp --tied: LayerNorm, GELU, learned
// positions) and Llama's (--rmsnorm --rope --swiglu --no-bias: RMSNorm, rotary positions,
// SwiGLU), which hf_export.h writes as GPT2LMHeadModel and LlamaForCausalLM folders.
//
// Parameter names follow a PyTorch state_dict ("layers.0.attn.W_Q.weight"), so a checkpoint's
// .npy files load into the equivalent nn.Module (tools/model_torch.py) one to one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tensor.h"

namespace attnsim::model {

struct ModelConfig {
  int64_t vocab = 65;       // V, BOS included (token 0)
  int64_t seq_len = 48;     // T: the positional table's length, the longest input
  int64_t d_model = 64;
  int64_t heads = 4;
  int64_t kv_heads = 0;     // g key/value heads (GQA; 1 = MQA); 0 = heads (MHA); must divide heads
  int64_t layers = 2;
  bool layernorm = false;   // pre-LN before attention (and the MLP) and before the unembedding
  bool rmsnorm = false;     // the same norms as RMSNorm (Llama's: no centring, no bias, eps 1e-5)
  bool mlp = false;         // a 4·d GELU MLP after each attention
  bool swiglu = false;      // with mlp: SwiGLU (Llama's), three (ff,d) maps with ff ≈ 8d/3, as
                            // many parameters as GELU's two of 4d
  double rope_theta = 0;    // > 0: rotary positions on q and k with this base (no pos_embed)
  bool bias = true;         // biases in every linear map
  // GPT-2's form: the unembedding is embed.weight itself (one matrix, both gradients), and the
  // weights start as GPT-2's do (normal 0.02, residual outputs 0.02/√(2L), biases 0), since
  // N(0, 1) embeddings read back as logits of std √d would start training far from uniform;
  // an RMSNorm model starts so too, tied or not
  bool tied = false;
  bool torch_init = false;  // torch.nn's default initialisation (N(0, 1) embeddings) even when tied
                            // or RMSNorm: the previous-token head forms sooner (docs/language-model.md)
  uint64_t seed = 1;        // initial weights

  int64_t head_dim() const { return d_model / heads; }
  int64_t kv_group_count() const { return kv_heads ? kv_heads : heads; }  // g
  int64_t kv_dim() const { return kv_group_count() * head_dim(); }       // g·dk, rows of W_K / W_V
  // ff: 4d for GELU; for SwiGLU ⌈8d/3⌉ rounded up to a multiple of 8 (d 128 → 344)
  int64_t mlp_dim() const { return swiglu ? ((8 * d_model + 2) / 3 + 7) / 8 * 8 : 4 * d_model; }
  bool norms() const { return layernorm || rmsnorm; }
  bool rope() const { return rope_theta > 0; }
};

// Throws Error naming the problem: sizes <= 0 or past the limits below, d_model % heads,
// heads % kv_heads, both norms, --swiglu without --mlp, RoPE on an odd head size.
void validate(const ModelConfig& config);

struct ParamSpec {
  std::string name;  // "layers.0.attn.W_Q.weight"
  Dims shape;
};
// Every parameter in a fixed order (the checkpoint's, the optimiser's).
std::vector<ParamSpec> param_specs(const ModelConfig& config);
int64_t param_count(const ModelConfig& config);
// The parameter the unembedding reads: "embed.weight" when tied, else "unembed.weight".
const char* unembed_name(const ModelConfig& config);

}  // namespace attnsim::model
