// The whole forward pass of a model as named steps (DESIGN.md, "The whole pass as a trace"):
// one list for every model attnsim runs, which differ only in the steps they skip.
//
//   model level (OUT/<step>.npy)
//     tok_embed     embed[tokens]                                  (1,T,d)    gather, new storage
//     pos_embed     pos_embed[0..T)  (learned positions)            (1,T,d)    skipped under RoPE
//     embed         tok_embed + pos_embed: the residual stream       (1,T,d)
//   per block l (OUT/layer_<l>/<step>.npy)
//     norm_attn     LayerNorm / RMSNorm of the stream               (1,T,d)    skipped without norms
//     query ... out the engine's attention steps (engine/trace.h)   query = norm_attn's tensor
//     resid_attn    stream + out                                    (1,T,d)
//     norm_mlp      the second norm                                 (1,T,d)    skipped without norms / MLP
//     mlp_gate      gate(x)                   SwiGLU only           (1,T,ff)
//     mlp_up        c_fc(x) / up(x)                                 (1,T,ff)
//     mlp_act       gelu(mlp_up) / silu(mlp_gate) ⊙ mlp_up          (1,T,ff)
//     mlp_down      c_proj(mlp_act) / down(mlp_act)                 (1,T,d)
//     resid_mlp     resid_attn + mlp_down: the block's output       (1,T,d)    skipped without MLP
//   model level, after the blocks
//     norm_final    the final norm                                  (1,T,d)    skipped without norms
//     logits        · unembedᵀ (+ bias)                             (1,T,V)
//     probs top_k top_p next_token                                  sampling.h
//
// Every model runs this one pass: the app's views and the dumps (every step kept), the trainer
// (a batch, the norms' statistics kept for its backward), the Hugging Face commands (one
// block's steps kept, the others' alpha and ctx_heads) and decode (over per-layer KV caches,
// the engine's cached attention in place of its forward). What computes a step (fixed-order
// products, packed weights) is chosen behind the engine's Backend, not here.
//
// Skip rules: GPT-2 skips mlp_gate; Llama and Qwen2 skip pos_embed (RoPE); the toy model skips
// the norms without --layernorm and the MLP steps without --mlp. A skipped step is listed with
// its reason, as the engine's attention steps are.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/kv_cache.h"
#include "engine/mha.h"
#include "engine/trace.h"
#include "model/pass/pass_ops.h"
#include "model/pass/sampling.h"

namespace attnsim::model {

inline constexpr std::array<const char*, 3> kEmbedSteps = {"tok_embed", "pos_embed", "embed"};
inline constexpr std::array<const char*, 8> kBlockSteps = {"norm_attn", "resid_attn", "norm_mlp", "mlp_gate",
                                                            "mlp_up",    "mlp_act",    "mlp_down", "resid_mlp"};
inline constexpr std::array<const char*, 6> kHeadSteps = {"norm_final", "logits", "probs", "top_k", "top_p", "next_token"};

enum class MlpKind {
  None,    // the toy model without --mlp
  Gelu,    // mlp_up → mlp_act (GELU) → mlp_down                    GPT-2, the toy model
  SwiGlu,  // mlp_gate, mlp_up → mlp_act = silu(gate) ⊙ up → mlp_down   Llama, Qwen2
};

// One block's weights as float32 tensors (shared with the model, never copied); a Linear may
// carry its weight packed once instead (backend.h), as a Hugging Face model's do.
struct BlockWeights {
  Tensor norm1_w, norm1_b;  // (d); b undefined for RMSNorm
  MhaWeights attn;
  Tensor norm2_w, norm2_b;
  Linear gate, up, down;    // gate (ff,d) SwiGLU only; up (ff,d); down (d,ff)
};

// A model as the whole pass sees it: what every family gives (whole_models.cpp makes one
// from a Hugging Face model or a toy checkpoint).
struct PassModel {
  std::string family;  // "gpt2", "llama", "qwen2", "toy"
  int64_t layers = 0, d_model = 0, d_ff = 0, vocab = 0, max_positions = 0;
  NormKind norm = NormKind::None;
  double norm_eps = 1e-5;
  MlpKind mlp = MlpKind::None;
  Activation act = Activation::GeluErf;  // of mlp_act
  Tensor embed;                          // (V,d)
  Tensor pos_embed;                      // (P,d); undefined under RoPE
  Tensor norm_f_w, norm_f_b;             // (d)
  Tensor unembed, unembed_bias;          // (V,d), (V) or undefined
  std::shared_ptr<const PackedWeight> unembed_packed;  // unembed packed once (HF models), or null
  std::function<BlockWeights(int64_t)> block;        // block l's weights (HF F16 / BF16: widened now)
  std::function<MhaConfig(int64_t)> attention;       // one block's attention on T tokens
};

// Why `step` does not apply to this model ("" when it does): the one skip rule.
std::string skip_reason(const PassModel& model, const std::string& step);
// Every step of the pass in order, blocks' steps as "layer_<l>/<step>" (the dump's paths),
// attention steps included: what a view lists.
std::vector<std::string> whole_step_paths(const PassModel& model, int64_t T);

// How one run of the pass is fed and what it keeps.
struct PassOptions {
  int64_t batch = 1;               // tokens holds `batch` sequences of one length, row after row
  bool sample = true;              // the sampling steps (one sequence only); else listed as skipped
  bool refuse_nonfinite = true;    // throw at the first non-finite step; else carry the values on
                                   // (the trainer names the tensor itself when its loss is NaN),
                                   // and with no sampling leave the logits uncounted (Trace::count)
  int64_t keep_layer = -1;         // -1: every block's steps; l: block l's, the others only alpha, ctx_heads
  bool norm_stats = false;         // keep each LayerNorm's mean and rstd (the trainer's backward reads them)
  std::vector<std::vector<HeadPatch>> patches;  // per layer: heads whose ctx slice is replaced before W_O
  std::vector<KvCache>* caches = nullptr;       // per layer (decode): attend over the cache, appending
                                                // the new tokens' K/V; positions start at its length
};

struct WholeTrace {
  Trace model;               // tok_embed pos_embed embed norm_final logits probs top_k top_p next_token
  std::vector<Trace> blocks; // per block: norm_attn, the attention steps, resid_attn ... resid_mlp
  MhaConfig attention;       // every block's attention config (trace.json)
  // with PassOptions::norm_stats, per block (norm_attn, norm_mlp), and norm_final's
  std::vector<NormStats> norm_attn_stats, norm_mlp_stats;
  NormStats norm_final_stats;

  const Tensor& logits() const { return model.at("logits").out; }  // (B,T,V)
};

// The step that holds the residual stream leaving block l (its resid_mlp, or resid_attn in a
// model without an MLP); "embed" for l = -1: the path block l+1 reads.
std::string stream_after(const PassModel& model, int64_t l);
// Its name inside the block's own trace ("resid_mlp" or "resid_attn").
const char* block_output_step(const PassModel& model);

// A block's engine attention steps, query ... out (or a cached call's), without the norm,
// residual and MLP steps around them: the attention trace the engine's views and dumps show.
Trace attention_steps_of(Trace&& block);

// Throws Error for an empty sequence, an id outside 0..vocab-1 or more than max_positions ids.
void check_token_ids(const std::vector<int32_t>& tokens, int64_t vocab, int64_t max_positions);
// Bytes whole_forward holds beyond the parameters (every step kept), predicted from the sizes
// before anything is loaded, in checked arithmetic. `attention`: one block's, on the T tokens.
struct PassSizes {
  int64_t layers = 0, d_model = 0, d_ff = 0, vocab = 0;
};
int64_t predict_whole_bytes(const PassSizes& sizes, const MhaConfig& attention);
// One block of the pass on the stream x (B,T,d), named `stream`: norm_attn, the attention steps
// `attend` makes of its input, resid_attn, norm_mlp ... resid_mlp, added to t; returns the
// block's output. whole_forward's attention is the engine's forward or a cached call; decode on
// the engine's stack (experiments/decode.h) brings the stack's own cached call. `kept` false:
// the caller keeps none of the block's steps but attention's alpha and ctx_heads, so the MLP's
// activation overwrites its input (mlp_up then holds mlp_act's values).
Tensor block_forward(const PassModel& model, const BlockWeights& weights, const Tensor& x, const std::string& stream,
                     const std::function<Trace(const Tensor&)>& attend, Trace& t, NormStats* norm_attn = nullptr,
                     NormStats* norm_mlp = nullptr, bool kept = true);
// norm_final of x (B,T,d), added to t (skipped without norms: x itself).
Tensor final_norm(const PassModel& model, const Tensor& x, const std::string& stream, Trace& t, NormStats* stats = nullptr);

// The pass. Throws Error on bad tokens (or a decode past the caches), bad sampling options, or
// a pass that overflows float32 (the first non-finite step named, "layer_1/mlp_act").
WholeTrace whole_forward(const PassModel& model, const std::vector<int32_t>& tokens, const SamplingOptions& sampling = {},
                         const PassOptions& options = {});

}  // namespace attnsim::model
