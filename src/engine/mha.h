// Multi-head attention forward pass that keeps every intermediate under its step name.
//
// Follows the article's PyTorch class (d_model, h heads, dk = d_model / h):
//   q = W_Q(query).view(B,Tq,h,dk).transpose(1,2)        # (B,h,Tq,dk)
//   k = W_K(key).view(B,Tk,h,dk).transpose(1,2)          # (B,h,Tk,dk)
//   v = W_V(value).view(B,Tk,h,dk).transpose(1,2)        # (B,h,Tk,dk)
//   q, k = rope(q), rope(k)   (rope_theta > 0; rope.h)   # q_rot k_rot, new storage
//   scores = q @ k.transpose(-2,-1) / sqrt(dk)           # (B,h,Tq,Tk)
//   scores = scores.masked_fill(mask, -inf)              # mask (B,1,Tq,Tk), true = hidden
//   alpha  = dropout(softmax(scores, dim=-1))            # (B,h,Tq,Tk)
//   ctx    = (alpha @ v).transpose(1,2).contiguous().view(B,Tq,d)
//   out    = W_O(ctx)                                    # (B,Tq,d)
//
// Grouped-query attention (kv_heads = g < h; g = 1 is MQA): W_K and W_V are (g·dk, d), so
// k and v are (B,g,Tk,dk). The r = h/g query heads of group j read K/V head j through
//   k_grouped = k.unsqueeze(2).expand(B,g,r,Tk,dk)        # view: stride 0 on the r axis
// (no copy), or, with kv_repeat_copy, through the repeat_interleave(r, dim=1) copy that
// common code makes (B,h,Tk,dk), its bytes counted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend.h"
#include "bugs.h"
#include "mask.h"
#include "rope.h"
#include "trace.h"

namespace attnsim {

struct MhaConfig {
  int64_t batch = 1;
  int64_t tq = 6;
  int64_t tk = 6;
  int64_t d_model = 16;
  int64_t heads = 4;
  int64_t kv_heads = 0;        // g; 0 means g = heads (MHA); heads % g == 0; 1 is MQA
  bool kv_repeat_copy = false; // g < h: repeat_interleave copy instead of the stride-0 view
  bool self_attention = true;  // query, key and value are one tensor (needs tq == tk)
  bool bias = true;
  uint64_t seed = 0;           // weights, inputs and dropout derive from it
  float dropout = 0.0f;
  bool train = false;          // dropout only applies in train mode
  bool wo_identity = false;    // W_O replaced by the identity: out = ctx_concat
  double rope_theta = 0;       // rotary embedding base (Llama's rope_theta); 0 = none (q_rot, k_rot skipped)
  RopeScaling rope_scaling;    // Llama 3's long-context frequency scaling (rope.h); factor 0 = none
  int64_t position0 = 0;       // absolute position of the first query/key row (RoPE; decode: the cache length)
  MaskSpec mask;
  Bug bug = Bug::None;
  int64_t mem_limit = 0;       // bytes; 0 means 75 % of physical memory

  int64_t head_dim() const { return d_model / heads; }
  int64_t kv_group_count() const { return kv_heads ? kv_heads : heads; }  // g
  int64_t kv_dim() const { return kv_group_count() * head_dim(); }       // g·dk, rows of W_K / W_V
  bool grouped() const { return kv_group_count() < heads; }
};

// Throws Error naming the problem and the numbers (d_model % heads, sizes <= 0, ...).
void validate(const MhaConfig& config);

// The scores' scale: 1/sqrt(dk), or 1 with Bug::NoScale. The one rule forward(), the tiled
// path (flash.h) and the app's replays of it share.
float attention_scale(const MhaConfig& config);

struct MhaWeights {
  Linear W_Q, W_K, W_V, W_O;
};

// nn.Linear's default init (uniform in ±1/sqrt(in)), deterministic in seed. W_K and W_V
// have kv_dim = g·dk rows (0 means d_model); with g < h they are the first g·dk rows of the
// MHA weights of the same seed.
MhaWeights init_weights(int64_t d_model, bool bias, uint64_t seed, int64_t kv_dim = 0);
// Reads DIR/W_Q.weight.npy, DIR/W_Q.bias.npy, ...; biases are optional files. Throws Error
// naming the file and the expected shape (W_K, W_V: (kv_dim, d_model); 0 means d_model).
MhaWeights load_weights(const std::string& dir, int64_t d_model, bool bias, int64_t kv_dim = 0);
void save_weights(const MhaWeights& weights, const std::string& dir);

// Head ablation (TransformerLens's hook_z patching): the head's slice of ctx_heads, (B,Tq,dk),
// is replaced before W_O by zeros (`value` empty) or by one fixed (dk) vector, e.g. the head's
// mean context over a reference batch ("mean ablation").
struct HeadPatch {
  int64_t head = 0;
  std::vector<float> value;  // empty = zero ablation, else dk values
};

struct MhaInputs {
  Tensor query;      // (B,Tq,d)
  Tensor key;        // (B,Tk,d); same tensor as query for self-attention
  Tensor value;      // (B,Tk,d)
  Tensor mask_file;  // optional bool mask broadcastable to (B,h,Tq,Tk); ORed with config.mask
  std::vector<HeadPatch> head_patches;  // applied to ctx_heads; none = the plain pass
};

// Standard normal inputs, deterministic in seed.
MhaInputs random_inputs(const MhaConfig& config);
// Throws Error when shapes do not match the config.
void check_inputs(const MhaConfig& config, const MhaInputs& inputs);

// Bytes the trace of this config will hold, computed before anything is allocated.
// Every prediction uses checked arithmetic: a size that would wrap is an Error.
int64_t predict_trace_bytes(const MhaConfig& config);
// Bytes of random_inputs(config): query (+ key, value for cross-attention).
int64_t predict_input_bytes(const MhaConfig& config);
// Bytes of init_weights / load_weights: W_Q W_K W_V W_O with or without biases.
int64_t predict_weight_bytes(int64_t d_model, bool bias);
// config.mem_limit when set, else 75 % of physical memory or of the address-space limit
// (ulimit -v), whichever is lower.
int64_t effective_mem_limit(const MhaConfig& config);

// Runs the forward pass. Throws Error on a bad config or one whose predicted memory
// exceeds the limit. With Bug::ViewWithoutContiguous the pass stops at ctx_concat: the
// steps before it are kept and `error` holds the engine's real message.
// `earlier`, a trace of an earlier pass: when it read the same input and weight tensors at
// the same sizes (an edit of the mask, a bug, the scale or dropout), its steps up to
// q/k/v_heads are taken instead of computed (trace.reused_head_steps), bit for bit the same.
struct ForwardResult {
  Trace trace;
  std::string error;
};
ForwardResult forward(const MhaConfig& config, const MhaWeights& weights, const MhaInputs& inputs,
                      Backend& backend = cpu_backend(), const Trace* earlier = nullptr);

}  // namespace attnsim
