// What counting alone reaches on the same targets as a language model: the baselines a trained
// model must beat (issue 36: unigram and bigram; issue 46: the trigram). Counted on the
// training stream (every position, across line boundaries, as the stream runs: EOS l1 EOS l2
// ...), scored in nats on every target of `windows` with the context the model has there:
// the tokens of its window up to it. A window's first target has one token of context (EOS),
// so the trigram models score it with their bigram order as the highest.
//
//   unigram   p(w) = (c(w) + 1) / (N + V)                         add-one over the vocabulary
//   bigram    p(w | v) = λ_v c(v,w)/c(v·) + (1 − λ_v) p_uni(w)    interpolated Witten–Bell:
//             λ_v = c(v·) / (c(v·) + n(v·)), n(v·) the distinct tokens seen after v
//   trigram   interpolated absolute discounting and interpolated Kneser–Ney, one discount
//             D = 0.75 at every order (Chen & Goodman 1998, §2.6 and §3.5), down to a
//             uniform 1/V:
//               p(w | h) = max(a(h,w) − D, 0) / a(h·) + D · n(h·) / a(h·) · p(w | h')
//             h = (u,v), (v), (); h' is h without its first token; a(h·) = Σ_w a(h,w),
//             n(h·) = |{w : a(h,w) > 0}|; a context with a(h·) = 0 gives p(w | h').
//             absolute discounting: a = c, the raw counts, at every order.
//             Kneser–Ney: a = c at the target's highest order, continuation counts below it:
//               a(v,w) = N1+(•,v,w) = |{u : c(u,v,w) > 0}|,  a(w) = N1+(•,w) = |{v : c(v,w) > 0}|
//
// Every probability above is a distribution over the V tokens (tests/test_ngram.cpp sums them).
#pragma once

#include <cstdint>
#include <vector>

#include "model/pass/forward.h"
#include "model/training/text_task.h"

namespace attnsim::model {

inline constexpr double kNgramDiscount = 0.75;  // D of both trigram models, at every order
// Three token ids are packed into one 64-bit key: V³ < 2⁶³.
inline constexpr int64_t kNgramMaxVocab = int64_t{1} << 21;

struct NgramLoss {
  double unigram = 0, bigram = 0, trigram_ad = 0, trigram_kn = 0;  // nats per target
  int64_t tokens = 0;                                              // targets scored
  // −ln p of every target, laid out as windows.targets (B·T); 0 where there is no target
  std::vector<double> unigram_each, bigram_each, trigram_ad_each, trigram_kn_each;
};
// Throws Error when the vocabulary is kNgramMaxVocab or more.
NgramLoss ngram_baselines(const TextStream& train, const Batch& windows);

// Bytes ngram_baselines holds at its peak, from the training stream's length, the vocabulary
// and the windows' positions (B·T), before anything is counted: the sorted trigram and bigram
// keys with their counts (at most one of each per training token), per-token arrays of V and
// the four per-target vectors.
int64_t predict_ngram_bytes(int64_t train_tokens, int64_t vocab, int64_t window_positions);

}  // namespace attnsim::model
