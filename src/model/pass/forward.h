// The tiny transformer's forward pass over one batch, every activation kept for the backward
// (training/backward.h), and its loss.
//
// Each layer's attention is the engine's forward() (causal mask, the 25 named steps), so a
// layer's trace opens in every view of the app and `attnsim-cli trace --model`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/mha.h"
#include "engine/trace.h"
#include "model/formats/toy_model.h"

namespace attnsim::model {

// What part of a task a target belongs to (tasks.h makes the batches; the loss is split by it).
enum Part : uint8_t {
  kOther = 0,        // noise: unpredictable
  kFirst = 1,        // the first copy of the segment
  kRepeatStart = 2,  // the second copy's first token: unpredictable
  kRepeat = 3,       // the rest of the second copy: predictable by induction
  kCopy = 4,         // copy-prev targets
  kRecall = 5,       // recall's answers: the value stored with the query key
  kGistFirst = 6,    // gist's first answer: the majority half, with no earlier answer to copy
  kGist = 7,         // gist's later answers (the same token as the first)
  kPartCount = 8,
};
// "other", "first", "repeat-start", "repeat", "copy", "recall", "gist-first", "gist"
const char* part_name(int part);

// One batch of token sequences with per-position targets.
//   tokens  (B,T)  token ids, tokens[b][0] is BOS in every built-in task
//   targets (B,T)  what position t must predict, -1 = not scored (e.g. the last position)
//   part    (B,T)  which part of the task position t's target belongs to (tasks.h: Part)
struct Batch {
  int64_t batch = 0, len = 0;
  std::vector<int32_t> tokens, targets;
  std::vector<uint8_t> part;
};

// Heads to knock out: the head's ctx slice before W_O becomes zeros or its mean.
struct HeadRef {
  int64_t layer = 0, head = 0;
  bool operator==(const HeadRef&) const = default;
};
struct Ablation {
  std::vector<HeadRef> heads;
  bool mean = false;                                // else zero
  std::vector<std::vector<std::vector<float>>> means;  // [layer][head] (dk), for mean ablation
};

// Per layer: what the backward reads. The attention's own tensors live in its trace.
struct LayerActs {
  Tensor x_in;                      // (B,T,d) the residual stream entering the layer
  Tensor ln_out, ln_mean, ln_rstd;  // (B,T,d) (B,T) (B,T) with norms (RMSNorm: no mean)
  Trace attn;                       // the engine's 25 steps; `out` is the attention output
  std::vector<int64_t> ablated;     // heads whose ctx was replaced (no gradient flows into them)
  Tensor x_mid;                     // (B,T,d) x_in + attention
  Tensor ln2_out, ln2_mean, ln2_rstd;
  Tensor gate_out;                  // (B,T,ff) SwiGLU's gate (before silu)
  Tensor fc1_out, gelu_out;         // (B,T,ff) when mlp: mlp_up, mlp_act (gelu, or silu(gate) ⊙ up)
  Tensor x_out;                     // (B,T,d) leaving the layer
};

struct Activations {
  Tensor x0;                           // (B,T,d) embed (+ pos_embed)
  std::vector<LayerActs> layers;
  Tensor lnf_out, lnf_mean, lnf_rstd;  // with norms
  Tensor logits;                       // (B,T,V)
};

// Bytes one forward (no backward) of `batch` sequences holds beyond the parameters: every
// layer's activations and the (B,T,V) logits. Saturates at int64 max / 4 instead of wrapping.
int64_t predict_forward_bytes(const ModelConfig& config, int64_t batch, int64_t len);

// Throws Error on tokens out of range or a sequence longer than seq_len.
Activations forward(const Model& model, const Batch& batch, const Ablation* ablation = nullptr);
// forward, refusing a pass whose values overflow float32 (finite weights of 3e38 give inf
// scores, then NaN): Error "the forward pass overflowed float32: first non-finite tensor:
// layer_0/q_proj (...)", thrown at the first layer that holds one. Every evaluation
// (head scores, ablation, experiments, lessons, the CLI) uses this, so no NaN table or loss
// reaches a user with exit 0; only the trainer runs plain forward and names the tensor itself.
Activations forward_finite(const Model& model, const Batch& batch, const Ablation* ablation = nullptr);

// Cross-entropy over the scored positions, split by part.
struct PartStats {
  double loss_sum = 0;
  int64_t count = 0, correct = 0;
  double loss() const { return count ? loss_sum / static_cast<double>(count) : 0.0; }
  double accuracy() const { return count ? static_cast<double>(correct) / static_cast<double>(count) : 0.0; }
};
struct LossStats {
  PartStats all;
  std::vector<PartStats> parts;  // indexed by Part
};
// Loss stats; when dlogits is given, fills it with d(mean loss)/d(logits), (B,T,V).
LossStats cross_entropy(const Tensor& logits, const Batch& batch, Tensor* dlogits = nullptr);


// A batch made of given sequences (all the same length), scored as next-token prediction
// with part kOther everywhere; for the app's typed sequences and `trace --text`.
Batch batch_from_tokens(const std::vector<std::vector<int32_t>>& sequences);

}  // namespace attnsim::model
