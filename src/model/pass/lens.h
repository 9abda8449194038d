// Reading the residual stream of a whole pass (whole_pass.h) in the vocabulary.
//
// Logit lens (nostalgebraist 2020): the stream after the embeddings and after each block, at
// one position, through the final norm (with its own statistics on that stream) and the
// unembedding: what the model would say if it stopped there.
//
// Direct logit attribution (TransformerLens's decompose_resid / logit attribution): the
// final stream at position p is a sum of parts, each written by one component,
//   x = tok_embed + pos_embed + Σ_l ( Σ_h W_O[:, h]·ctx_h + b_O + mlp_down )
// and the final norm is made linear by freezing its scale at its value on the whole stream:
//   LayerNorm: part c contributes Σ_i (c_i − mean(c)) / σ · w_i · U[t,i],  σ = sqrt(var(x) + eps)
//              (centring is linear: the parts' means sum to x's mean)
//   RMSNorm:   Σ_i c_i / rms(x) · w_i · U[t,i],     rms = sqrt(mean(x²) + eps)
//   no norm:   Σ_i c_i · U[t,i]
// and the direct bias Σ_i b_i · U[t,i] + unembed_bias[t] (b the final LayerNorm's bias) is a
// part of its own. The parts sum to the model's logit (in double; tests: within 1e-4).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/pass/whole_pass.h"

namespace attnsim::model {

struct LensRow {
  std::string stage;          // "embed", "layer_0", ...: the stream after it
  std::vector<float> logits;  // (V)
  int32_t top = 0;            // arg max, lowest id on ties
  double top_prob = 0;        // softmax at temperature 1, in double
  double target_prob = 0;
};
struct LogitLens {
  int64_t position = 0;
  int32_t target = 0;         // the final answer: the last stage's arg max unless given
  std::vector<LensRow> rows;  // embed, then one per block
};
// position −1 = the last; target −1 = the model's own top token at that position.
LogitLens logit_lens(const PassModel& model, const WholeTrace& trace, int64_t position = -1, int32_t target = -1);

struct LogitPart {
  std::string name;  // "tok_embed", "pos_embed", "layer_L/head_H", "layer_L/attn_bias", "layer_L/mlp", "bias"
  double value = 0;
};
struct LogitAttribution {
  int64_t position = 0;
  int32_t token = 0;
  double logit = 0;              // the model's own logit (the logits step)
  std::vector<LogitPart> parts;  // in the order above, every part listed (0 where the model has none)
  double sum() const;
};
LogitAttribution attribute_logit(const PassModel& model, const WholeTrace& trace, int64_t position = -1,
                                 int32_t token = -1);

// The stream a block leaves: resid_mlp, or resid_attn in a model without an MLP.
const Tensor& block_output(const PassModel& model, const Trace& block);

}  // namespace attnsim::model
