// Backend: the default attention core, the four ops in turn (backend.h).
#include "backend.h"

namespace attnsim {

AttentionCore Backend::attention_core(const Tensor& q, const Tensor& k, const Tensor& v, const SoftmaxSpec& spec,
                                      float dropout_p, uint64_t seed) {
  AttentionCore out;
  out.scores = qk(q, k);
  out.softmax = scale_mask_softmax(out.scores, spec);
  if (dropout_p > 0) out.dropped = dropout(out.softmax.alpha, dropout_p, seed);
  out.ctx = av(dropout_p > 0 ? out.dropped : out.softmax.alpha, v);
  return out;
}

}  // namespace attnsim
