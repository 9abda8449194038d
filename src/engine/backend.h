// Backend: the ops the forward pass asks for. CPU always exists; CUDA sits behind the same
// interface when the build has it. Every op returns a new tensor on the host that the trace
// keeps (the CUDA backend copies back what the caller asked to keep).
//
//   linear              x (B,T,in) · Wᵀ (in,out) + b          -> (B,T,out)
//   qk                  q (B,h,Tq,dk) · k (B,h,Tk,dk)ᵀ        -> (B,h,Tq,Tk)
//   scale_mask_softmax  scores -> scaled, masked, alpha        each (B,h,Tq,Tk)
//   dropout             alpha · keep / (1-p)                   -> (B,h,Tq,Tk)
//   av                  alpha (B,h,Tq,Tk) · v (B,h,Tk,dk)      -> (B,h,Tq,dk)
//   contiguous          the copy                               -> same shape, row-major
//   qk_grouped          q (B,h,Tq,dk) · k (B,g,r,Tk,dk)ᵀ      -> (B,h,Tq,Tk)   h = g·r
//   av_grouped          alpha (B,h,Tq,Tk) · v (B,g,r,Tk,dk)   -> (B,h,Tq,dk)
//   rope                x (B,h,T,dk) rotated at positions p0.. -> (B,h,T,dk)    (rope.h)
//   flash_core          q, k, v heads -> out (B,h,Tq,dk), running m, l        (flash.h)
// q, k and v may be transposed views (inner stride 1): matrix products read them in place.
//
// Weights packed once (packed_weights.h). A model that opens its weights for inference (the
// Hugging Face path, hf_model.cpp) packs each Linear's weight once and keeps the packed form
// in Linear::packed, beside (or instead of) the float32 weight; linear(x, Linear) uses it,
// linear(x, weight, bias) never does. The CPU backend runs the packed product unless a
// FixedOrderProducts guard (gemm_fixed.h) is alive, so training stays bit for bit; a backend
// that cannot read the packed form (CUDA) uses the float32 weight, and refuses a Linear held
// packed only.
// The grouped k and v are stride-0 expand views (GQA / MQA): query head i = j·r + s reads
// K/V head j. A backend that reads them in place overrides the grouped ops; the default
// materialises the repeat copy first (and so does not keep the no-copy promise).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "rope.h"
#include "tensor.h"
#include "trace.h"

namespace attnsim {

class PackedWeight;      // packed_weights.h
struct FlashCoreResult;  // flash.h (which includes mha.h, which includes this file)
struct FlashMask;
struct FlashOptions;

// torch.nn.Linear layout: weight (out, in), bias (out) or undefined. `packed`, when set, is
// the same weight packed once for the CPU backend's product; `weight` is then undefined when
// the model keeps no float32 copy (hf_model.h says which it keeps).
struct Linear {
  Tensor weight;
  Tensor bias;
  std::shared_ptr<const PackedWeight> packed = nullptr;  // null: not packed
};

// What scale_mask_softmax does; the defaults are the correct path, the rest are bug modes.
struct SoftmaxSpec {
  float scale = 1.0f;                                         // 1/sqrt(dk); 1 with no-scale
  Tensor mask;                                                // bool, expanded to scores' shape; may be undefined
  Tensor mask2;                                               // second fill (two-fills bug)
  float fill = -std::numeric_limits<float>::infinity();      // value written where hidden
  bool additive = false;                                      // scaled + float(mask) instead of fill
  int axis = -1;                                              // -2 is the wrong-axis bug
  bool fp16_no_max = false;                                   // half precision, no max subtraction
};

struct SoftmaxSteps {
  Tensor scaled;  // scores_scaled
  Tensor masked;  // scores_masked (undefined when there is no mask)
  Tensor alpha;   // alpha
  bool counted = false;  // the NaN / inf counts below were taken while each row was in cache
  NonFinite scaled_counts, masked_counts, alpha_counts;
};

// The attention core of one pass: q·kᵀ, the softmax side, dropout and alpha·v.
struct AttentionCore {
  Tensor scores;         // (B,h,Tq,Tk)
  SoftmaxSteps softmax;  // scores_scaled, scores_masked, alpha
  Tensor dropped;        // alpha_dropped (B,h,Tq,Tk); undefined when dropout_p == 0
  Tensor ctx;            // ctx_heads (B,h,Tq,dk)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) = 0;
  // The same product for a Linear that may carry its packed weight. This default uses the
  // float32 weight (Error when there is none); the CPU backend uses the packed one.
  virtual Tensor linear(const Tensor& x, const Linear& l);
  virtual Tensor qk(const Tensor& q, const Tensor& k) = 0;
  virtual SoftmaxSteps scale_mask_softmax(const Tensor& scores, const SoftmaxSpec& spec) = 0;
  virtual Tensor dropout(const Tensor& alpha, float p, uint64_t seed) = 0;
  virtual Tensor av(const Tensor& alpha, const Tensor& v) = 0;
  virtual Tensor contiguous(const Tensor& x) = 0;
  // qk, scale_mask_softmax, dropout (when dropout_p > 0) and av. This default runs them one
  // after the other; a backend may interleave them (the CPU one runs all four per (batch,
  // head) while that head's rows are in cache) as long as every tensor comes out the same.
  virtual AttentionCore attention_core(const Tensor& q, const Tensor& k, const Tensor& v, const SoftmaxSpec& spec,
                                       float dropout_p, uint64_t seed);
  virtual Tensor qk_grouped(const Tensor& q, const Tensor& k_grouped);
  virtual Tensor av_grouped(const Tensor& alpha, const Tensor& v_grouped);
  // Rotary embedding of q or k heads (rope.h); the default is the host loop of rope_rotate.
  virtual Tensor rope(const Tensor& x, int64_t position0, double theta, const RopeScaling& scaling);
  // The tiled core of flash_forward; the default is the host's flash_attention_core. A backend
  // that cannot count the traffic and bytes fills them with flash_closed_form_figures.
  virtual FlashCoreResult flash_core(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMask& mask,
                                     float scale, const FlashOptions& options);
};

// (B,g,r,T,dk) -> (B,g·r,T,dk), a copy (stride 0 cannot be merged into the head axis).
Tensor repeat_groups(const Tensor& grouped);

Backend& cpu_backend();

// "cpu" always; "cuda" when built with CUDA and a device is present. Throws Error with one
// clear line otherwise.
Backend& backend_by_name(const std::string& name);
bool cuda_available(std::string* why_not = nullptr);

}  // namespace attnsim
