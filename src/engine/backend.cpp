// Backend: the default attention core, the four ops in turn (backend.h).
#include "backend.h"

#include "error.h"
#include "flash.h"
#include "rope.h"

namespace attnsim {

Tensor Backend::linear(const Tensor& x, const Linear& l) {
  if (!l.weight.defined())
    throw Error("backend '" + name() + "' cannot read a weight held only in packed form; use the cpu backend");
  return linear(x, l.weight, l.bias);
}

AttentionCore Backend::attention_core(const Tensor& q, const Tensor& k, const Tensor& v, const SoftmaxSpec& spec,
                                      float dropout_p, uint64_t seed) {
  AttentionCore out;
  out.scores = k.dim() == 5 ? qk_grouped(q, k) : qk(q, k);  // k (B,g,r,Tk,dk): the GQA group view
  out.softmax = scale_mask_softmax(out.scores, spec);
  if (dropout_p > 0) out.dropped = dropout(out.softmax.alpha, dropout_p, seed);
  const Tensor& weights = dropout_p > 0 ? out.dropped : out.softmax.alpha;
  out.ctx = v.dim() == 5 ? av_grouped(weights, v) : av(weights, v);
  return out;
}

Tensor Backend::rope(const Tensor& x, int64_t position0, double theta, const RopeScaling& scaling) {
  return rope_rotate(x, position0, theta, scaling);
}

FlashCoreResult Backend::flash_core(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMask& mask,
                                    float scale, const FlashOptions& options) {
  return flash_attention_core(q, k, v, mask, scale, options);
}

}  // namespace attnsim
