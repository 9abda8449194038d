// What the model commands ask of a Hugging Face model (hf_model.h): the next-token
// predictions, the head-role table (heads.h's definitions) on given tokens and on a repeated
// random sequence, and what knocking a head out costs the next-token loss.
#pragma once

#include <cstdint>
#include <vector>

#include "model/training/heads.h"
#include "model/pass/hf_forward.h"
#include "model/pass/forward.h"

namespace attnsim::model::hf {

// [SECTION] predictions

struct Prediction {
  int32_t token = 0;
  double prob = 0;   // softmax of the row's logits, in double
  float logit = 0;
};
// The k most likely next tokens after row `row` of logits (T,V), most likely first.
std::vector<Prediction> top_k(const Tensor& logits, int64_t row, int64_t k);
std::vector<Prediction> top_k(const std::vector<float>& logits, int64_t k);
// Mean over positions 0..T-2 of −log softmax(logits[p])[tokens[p+1]] (nats), in double;
// Error for fewer than 2 tokens (nothing is predicted).
double next_token_loss(const Tensor& logits, const std::vector<int32_t>& tokens);
// Greedy (temperature 0): the arg max, lowest id on ties. Else a draw from
// softmax(logits / temperature), seeded by (seed, step): the same seed gives the same text.
// sampling.h's sample_row with no top-k / top-p filter.
int32_t choose_next_token(const std::vector<float>& logits, double temperature, uint64_t seed, int64_t step);

// [SECTION] head roles

// heads.h's scores of every layer × head over B runs of equal length (run b on seqs[b]).
HeadTable score_hf_heads(const std::vector<HfForward>& runs, const std::vector<std::vector<int32_t>>& seqs, int64_t heads);
// The same over `sequences` repeated random sequences (seeds seed, seed+1, ...), each run
// through the model keeping no trace but alpha.
HeadTable score_hf_heads_repeated(const HfModel& model, int64_t len, int64_t sequences, uint64_t seed);
// BOS (when the config has one) + r + r, r drawn uniformly from the vocabulary, seeded:
// TransformerLens's repeated random sequence, where an induction head attends to the token
// after the earlier copy. 1 + 2·len tokens (2·len without BOS), within the model's positions.
std::vector<int32_t> repeated_random_tokens(const HfConfig& config, int64_t len, uint64_t seed);

// [SECTION] ablation

struct HeadAblation {
  std::vector<HeadRef> heads;  // knocked out together
  double loss = 0;             // next-token loss with them out
  double delta = 0;            // loss − the plain pass's loss
};
// "0.1,11.3" -> heads; Error naming a bad item or a head outside the model.
std::vector<HeadRef> parse_hf_heads(const std::string& text, const HfConfig& config);
// HfForwardOptions::patches knocking `heads` out: zero, or (with `base`, the plain pass) each
// head's ctx averaged over the sequence's positions.
std::vector<std::vector<HeadPatch>> head_patches(const HfConfig& config, const std::vector<HeadRef>& heads,
                                                 const HfForward* base = nullptr);
// With `heads` empty, each head alone (layers × heads passes); else those heads together.
// Zero ablation, or (mean) each head's mean ctx over the sequence's positions.
std::vector<HeadAblation> ablate_hf_heads(const HfModel& model, const std::vector<int32_t>& tokens,
                                          const std::vector<HeadRef>& heads, bool mean, double* base_loss = nullptr);

}  // namespace attnsim::model::hf
