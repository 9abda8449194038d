// One forward pass of a Hugging Face model (hf_model.h) on one sequence of token ids, and
// the incremental form over per-layer KV caches that decode uses.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kv_cache.h"
#include "engine/trace.h"
#include "model/formats/hf_model.h"

namespace attnsim::model::hf {

struct HfForwardOptions {
  int64_t keep_layer = -1;  // -1: keep every layer's whole trace; L: only layer L's (the others keep alpha)
  // per layer, the heads whose ctx slice is replaced before W_O (engine HeadPatch: zero or a
  // fixed vector); empty = the plain pass
  std::vector<std::vector<HeadPatch>> patches;
};

struct HfForward {
  std::vector<Trace> traces;   // per layer: the engine's named steps (empty where not kept)
  std::vector<Tensor> alpha;   // per layer (1,h,T,T)
  std::vector<Tensor> ctx;     // per layer (1,h,T,dk) ctx_heads, for mean ablation
  Tensor logits;               // (T,V)
};

// Bytes one hf_forward of T tokens holds beyond the parameters, predicted before anything runs.
int64_t predict_hf_forward_bytes(const HfConfig& config, int64_t T, bool keep_every_trace);
// Throws Error for an empty sequence, a token id outside the vocabulary or a sequence longer
// than the model's positions; and for a pass that overflows float32 (the tensor named).
HfForward hf_forward(const HfModel& model, const std::vector<int32_t>& tokens, const HfForwardOptions& options = {});

// The incremental pass: each feed() runs new tokens through every layer, appending their K/V
// (RoPE-rotated at their absolute positions) to the layer's cache, and returns the last new
// row's logits (V). Teacher-forced, it gives hf_forward's logits to rounding. The model must
// outlive the decoder (it holds a reference).
class HfDecoder {
 public:
  HfDecoder(const HfModel& model, int64_t t_max);
  // `traces` (when given) receives each layer's cached-call trace.
  std::vector<float> feed(const std::vector<int32_t>& tokens, std::vector<Trace>* traces = nullptr);
  int64_t length() const { return length_; }
  int64_t cache_bytes() const;  // K and V storage of every layer

 private:
  const HfModel& model_;
  std::vector<KvCache> caches_;
  int64_t length_ = 0;
};

// Checks token ids against the vocabulary and the length against the positions.
void check_tokens(const HfConfig& config, const std::vector<int32_t>& tokens);

}  // namespace attnsim::model::hf
