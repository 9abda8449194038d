// The sampling steps at the end of the whole pass (whole_pass.h), on the logits' last row:
//
//   probs       softmax(logits / temperature) over every position      (1,T,V)
//   top_k       the k most likely tokens kept, renormalised; 0 elsewhere (1,V)
//   top_p       of those, the smallest most-likely-first set whose mass
//               reaches p, renormalised; 0 elsewhere                     (1,V)
//   next_token  greedy: the arg max; else a seeded draw from top_p       (1,1) the id as float32
//
// The order is Hugging Face's (TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper).
// Rules the tests rely on:
//   - temperature 0 means greedy: next_token is the arg max of the logits; probs is shown at
//     temperature 1 and top_k / top_p are listed and skipped. A temperature t → 0 gives the
//     same token: exp((l − max)/t) underflows to 0 for every logit below the max.
//   - ties are broken by the lowest id: the arg max, the top-k boundary and the top-p ranking
//     all order tokens by (value descending, id ascending).
//   - top_k = V and top_p = 1 change nothing: every token is kept, the probabilities unchanged
//     (top_p: a token is kept when the mass ranked strictly before it is below p; p = 1 keeps all).
//   - a seeded draw repeats exactly: u = random_uniform(seed, Token, step) (engine/random.h),
//     the first id whose running sum of kept weights, in id order, passes u · their total.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/trace.h"

namespace attnsim::model {

struct SamplingOptions {
  double temperature = 0;  // 0 = greedy
  int64_t top_k = 0;       // 0 = off (every token); else 1..V
  double top_p = 1.0;      // (0, 1]; 1 = off
  uint64_t seed = 0;
  int64_t step = 0;        // which draw of a decode (the random stream's index)
};

// Throws Error with one line naming the option and the value: temperature NaN, negative, or
// past float32's range (1e308: "overflows float32"), or above kMaxTemperature; top_k above V;
// top_p outside (0, 1].
inline constexpr double kMaxTemperature = 100.0;
void validate_sampling(const SamplingOptions& options, int64_t vocab);

// The sampling steps on one row of V logits. Weights are exp((l − max)/t) in double, as
// choose_next_token has always drawn, so a seed gives the tokens it gave before filtering
// existed.
struct SampledRow {
  std::vector<float> top_k;  // (V) renormalised over the kept set; empty when greedy
  std::vector<float> top_p;  // (V)
  int32_t next = 0;
};
SampledRow sample_row(const float* logits, int64_t V, const SamplingOptions& options);

// softmax(logits / t) row by row (t = 1 when greedy): the fast path (vector exp) and, beside
// it, the plain-loop reference in double.   logits (1,T,V) -> (1,T,V)
Tensor softmax_at(const Tensor& logits, double temperature);
Tensor softmax_at_reference(const Tensor& logits, double temperature);

// The four sampling steps (probs top_k top_p next_token) from logits (1,T,V), as trace steps:
// what a view calls again with new options on the logits it keeps, without the pass.
Trace sampling_trace(const Tensor& logits, const SamplingOptions& options);

}  // namespace attnsim::model
