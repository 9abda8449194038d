// The held-out measures of issue 46 (src/model/experiments/ngram.h, text_measures.h, and the
// second-copy induction rows of src/model/training/heads.h): the trigram baselines against
// exact values from an independent reference, each a distribution, the trigram ahead of the
// bigram where text has trigram structure; standard errors over blocks; ICL per window;
// induction on the second copy's rows and the behavioural test on repeated lines.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "model/experiments/ngram.h"
#include "model/experiments/text_measures.h"
#include "model/text/hf_bpe_train.h"
#include "model/text/hf_tokenizer.h"
#include "model/training/heads.h"
#include "model/training/text_task.h"
#include "model/training/train.h"

using namespace attnsim;
using namespace attnsim::model;

namespace {

// `rows` windows of `len` tokens, targets the next token, the last position none.
Batch windows_of(const std::vector<std::vector<int32_t>>& rows) {
  Batch w;
  w.batch = static_cast<int64_t>(rows.size());
  w.len = static_cast<int64_t>(rows[0].size());
  for (const auto& r : rows)
    for (size_t t = 0; t < r.size(); ++t) {
      w.tokens.push_back(r[t]);
      w.targets.push_back(t + 1 < r.size() ? r[t + 1] : -1);
      w.part.push_back(kOther);
    }
  return w;
}

TextStream stream_of(std::vector<int32_t> tokens, int64_t vocab, int32_t eos) {
  TextStream s;
  s.vocab = vocab;
  s.eos = eos;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] == eos) s.starts.push_back(static_cast<int64_t>(i));
  s.tokens = std::move(tokens);
  return s;
}

hf::Tokenizer byte_tokenizer() {
  return hf::parse_tokenizer_json(hf::tokenizer_json(hf::train_bpe("ab", 1)), "test tokenizer");
}

}  // namespace

TEST_CASE("trigram baselines equal an independent reference on a tiny corpus", "[model][text][ngram]") {
  // a b c EOS = 0 1 2 3; train EOS a b EOS a b EOS a c; the exact fractions are printed by
  // tests/lm/ngram_reference.py (the formulas by dictionaries, in fractions):
  //   [EOS a c EOS]  t=0: AD 5/6  KN 13/16   t=1: AD 11/72 KN 23/96   t=2: AD 1/3  KN 1/4
  //   [EOS a b a]    t=0: AD 5/6  KN 13/16   t=1: AD 49/72 KN 55/96   t=2: AD 3/64 KN 9/128
  // t=0 has one token of context (bigram on top); t=2 of the first window backs off twice
  // (the context (a,c) ends the stream; c is never followed); t=2 of the second discounts.
  const TextStream train = stream_of({3, 0, 1, 3, 0, 1, 3, 0, 2}, 4, 3);
  const Batch w = windows_of({{3, 0, 2, 3}, {3, 0, 1, 0}});
  const NgramLoss n = ngram_baselines(train, w);
  REQUIRE(n.tokens == 6);
  const double ad[6] = {5.0 / 6, 11.0 / 72, 1.0 / 3, 5.0 / 6, 49.0 / 72, 3.0 / 64};
  const double kn[6] = {13.0 / 16, 23.0 / 96, 1.0 / 4, 13.0 / 16, 55.0 / 96, 9.0 / 128};
  const size_t at[6] = {0, 1, 2, 4, 5, 6};  // the targets' places in (B·T)
  double sum_ad = 0, sum_kn = 0;
  for (int k = 0; k < 6; ++k) {
    CHECK(n.trigram_ad_each[at[k]] == Approx(-std::log(ad[k])).epsilon(1e-12));
    CHECK(n.trigram_kn_each[at[k]] == Approx(-std::log(kn[k])).epsilon(1e-12));
    sum_ad -= std::log(ad[k]), sum_kn -= std::log(kn[k]);
  }
  CHECK(n.trigram_ad_each[3] == 0);  // no target there
  CHECK(n.trigram_ad == Approx(sum_ad / 6).epsilon(1e-12));
  CHECK(n.trigram_kn == Approx(sum_kn / 6).epsilon(1e-12));
  // the bigram keeps its Witten-Bell form: p(a | EOS) = 3/4 · 1 + 1/4 · (3 + 1)/(9 + 4)
  CHECK(n.bigram_each[0] == Approx(-std::log(0.75 + 0.25 * 4.0 / 13)).epsilon(1e-12));
}

TEST_CASE("each trigram baseline is a distribution in every context, seen or not", "[model][text][ngram]") {
  // 7 tokens, EOS = 6; every context (u, v) scored against every w: Σ_w p(w | u, v) = 1
  std::vector<int32_t> tokens;
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) tokens.push_back(i % 11 == 0 ? 6 : static_cast<int32_t>(rng() % 5));  // token 5 never occurs
  tokens[0] = 6;
  const TextStream train = stream_of(tokens, 7, 6);
  for (int32_t u = 0; u < 7; ++u)
    for (int32_t v = 0; v < 7; ++v) {
      std::vector<std::vector<int32_t>> rows;
      for (int32_t x = 0; x < 7; ++x) rows.push_back({u, v, x});  // t=1 predicts x after (u, v)
      Batch w = windows_of(rows);
      for (int64_t r = 0; r < 7; ++r) w.targets[static_cast<size_t>(r * 3)] = -1;  // t=0 apart
      const NgramLoss n = ngram_baselines(train, w);
      double ad = 0, kn = 0;
      for (int64_t r = 0; r < 7; ++r) {
        ad += std::exp(-n.trigram_ad_each[static_cast<size_t>(r * 3 + 1)]);
        kn += std::exp(-n.trigram_kn_each[static_cast<size_t>(r * 3 + 1)]);
      }
      CHECK(ad == Approx(1).epsilon(1e-12));
      CHECK(kn == Approx(1).epsilon(1e-12));
    }
}

TEST_CASE("a trigram baseline beats the bigram on text whose next token depends on two", "[model][text][ngram]") {
  // x_t = (x_{t-1} + x_{t-2}) mod 10 nine times in ten, else any of 10; EOS (10) every 40
  const auto make = [](uint32_t seed, int n) {
    std::mt19937 rng(seed);
    std::vector<int32_t> s;
    for (int i = 0; i < n; ++i) {
      if (i % 40 == 0) {
        s.push_back(10);
        continue;
      }
      const bool rule = i % 40 >= 3 && rng() % 10 != 0;
      s.push_back(rule ? (s[s.size() - 1] + s[s.size() - 2]) % 10 : static_cast<int32_t>(rng() % 10));
    }
    return s;
  };
  const TextStream train = stream_of(make(1, 40000), 11, 10), heldout = stream_of(make(2, 4000), 11, 10);
  const Batch w = text_windows(heldout, 40, INT64_MAX);
  const NgramLoss n = ngram_baselines(train, w);
  CHECK(n.bigram > 2.0);                   // about ln 10: one token says nothing of the next
  CHECK(n.trigram_kn < n.bigram - 1.0);    // two say it nine times in ten
  CHECK(n.trigram_ad < n.bigram - 1.0);
  CHECK(n.unigram > n.bigram - 0.1);
  const BlockMean d = paired_difference(w, n.trigram_kn_each, n.bigram_each);
  CHECK(d.blocks == w.batch);
  CHECK(d.mean == Approx(n.trigram_kn - n.bigram).epsilon(1e-9));
  CHECK(d.beyond(3));
}

TEST_CASE("the trigram baseline refuses a vocabulary past three ids in 64 bits; its memory is predicted",
          "[model][text][ngram]") {
  TextStream s = stream_of({0, 1, 0}, kNgramMaxVocab, 0);
  CHECK_THROWS_WITH(ngram_baselines(s, windows_of({{0, 1}})), Catch::Contains("64 bits"));
  CHECK(predict_ngram_bytes(1000, 10, 100) == 1000 * 40 + 10 * 80 + 100 * 32);
  CHECK_THROWS_WITH(predict_ngram_bytes(INT64_MAX / 2, 10, 100), Catch::Contains("64 bits"));
}

TEST_CASE("standard errors are over blocks: paired differences and ICL per window", "[model][text]") {
  // 3 windows of 4 positions (3 targets each); a − b per target 1 1 1 | 2 2 2 | 6 6 6
  const Batch w = windows_of({{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}});
  std::vector<double> a(12, 0.0), b(12, 0.0);
  const double per_window[3] = {1, 2, 6};
  for (int r = 0; r < 3; ++r)
    for (int t = 0; t < 3; ++t) a[static_cast<size_t>(r * 4 + t)] = 10 + per_window[r], b[static_cast<size_t>(r * 4 + t)] = 10;
  a[3] = 1e9;  // a position without a target is never read
  const BlockMean d = paired_difference(w, a, b);
  CHECK(d.blocks == 3);
  CHECK(d.mean == Approx(3));
  // sd of 1, 2, 6 with n − 1: √((4 + 1 + 9) / 2) = √7; SE = √7 / √3
  CHECK(d.se == Approx(std::sqrt(7.0 / 3)).epsilon(1e-12));
  CHECK(d.beyond(1));
  CHECK_FALSE(d.beyond(3));
  CHECK(block_mean({4.0}).se == 0);
  CHECK_FALSE(block_mean({4.0}).beyond(3));
}

TEST_CASE("ICL over every window: its mean is evaluate_text's, its SE across windows", "[model][text]") {
  ModelConfig c;
  c.vocab = 257;
  c.seq_len = 24;
  c.d_model = 16;
  c.heads = 2;
  c.layernorm = c.mlp = c.tied = true;
  const Model m = init_model(c);
  std::string text;
  for (int i = 0; i < 60; ++i) text += "gloss number " + std::to_string(i * 7) + " of some text\n";
  const TextStream s = tokenize_lines(byte_tokenizer(), text);
  const Batch w = text_windows(s, 24, INT64_MAX);
  std::vector<double> each;
  const TextEval e = evaluate_text(m, w, &each);
  CHECK(evaluate_text(m, w).loss == e.loss);  // the per-target losses change nothing
  const BlockMean icl = icl_over_windows(w, each);
  CHECK(icl.blocks == w.batch);
  CHECK(icl.mean == Approx(e.icl).margin(1e-12));
  CHECK(icl.se > 0);
  const IclPositions p = icl_positions(128);  // the shipped model's: 10..20 and 96..126
  CHECK(p.early_from == 10);
  CHECK(p.early_to == 21);
  CHECK(p.late_from == 96);
}

TEST_CASE("induction on the second copy's rows: all rows from 0 are the head table's, the copy's own target apart",
          "[model][heads]") {
  // EOS x y x | x y x (R = 3, T = 7): the first copy's row 3 (x again) has an induction target
  const int64_t R = 3, T = 7;
  const std::vector<int32_t> tok{9, 1, 2, 1, 1, 2, 1};
  std::vector<float> A(static_cast<size_t>(T * T), 0.0f);
  for (int64_t i = 0; i < T; ++i) A[static_cast<size_t>(i * T)] = 1.0f;  // everything on position 0 ...
  A[static_cast<size_t>(3 * T)] = 0, A[static_cast<size_t>(3 * T + 2)] = 1;  // ... but row 3 on 2 (after the earlier x)
  for (int64_t i = R + 1; i < T; ++i) {  // the second copy: half on the copy's next token
    A[static_cast<size_t>(i * T)] = 0.5f;
    A[static_cast<size_t>(i * T + i - R + 1)] = 0.5f;
  }
  const HeadScores s = score_pattern(A.data(), tok.data(), 1, T);
  const RowSum all = induction_rows(A.data(), tok.data(), 1, T, 0);
  CHECK(all.mean() == s.induction);
  // rows with a target: 3 (x: j=2), 4 (x: j=2,4), 5 (y: j=3), 6 (x: j=2,4,5); 1.0, .5, .5, .5
  CHECK(all.rows == 4);
  CHECK(all.mean() == Approx(2.5 / 4));
  const RowSum second = induction_rows(A.data(), tok.data(), 1, T, R + 1);
  CHECK(second.rows == 3);
  CHECK(second.mean() == Approx(0.5));
  const RowSum own = copy_rows(A.data(), 1, R);
  CHECK(own.rows == 3);
  CHECK(own.mean() == Approx(0.5));
}

TEST_CASE("repeated held-out lines: second-copy scores per head and the loss with and without the first copy",
          "[model][text][heads]") {
  ModelConfig c;
  c.vocab = 257;
  c.seq_len = 24;
  c.d_model = 16;
  c.heads = 2;
  c.layers = 2;
  c.layernorm = c.mlp = c.tied = true;
  const Model m = init_model(c);
  std::string text;
  for (int i = 0; i < 80; ++i) text += (i % 3 ? "a longer line of held-out text " : "short ") + std::to_string(i) + "\n";
  const TextStream s = tokenize_lines(byte_tokenizer(), text);
  const int64_t R = 11;
  const RepeatedLines r = evaluate_repeated_lines(m, s, R);
  CHECK(r.lines == repeated_text(s, R, INT64_MAX).batch);
  REQUIRE(r.lines > 32);  // more than one batch of 32
  REQUIRE(r.second_copy.size() == 4);
  // the first 32 lines, scored directly
  const Batch first = repeated_text(s, R, 32);
  const Activations acts = forward_finite(m, first);
  const int64_t T = 2 * R + 1;
  std::vector<float> one(static_cast<size_t>(32 * T * T));
  const Tensor& alpha = acts.layers[1].attn.at("alpha").out;  // (32,h,T,T)
  for (int64_t b = 0; b < 32; ++b) std::copy_n(alpha.f32() + (b * 2 + 1) * T * T, T * T, one.data() + b * T * T);
  CHECK(r.second_copy_log[3] == Approx(induction_rows(one.data(), first.tokens.data(), 32, T, R + 1).mean()).epsilon(1e-12));
  CHECK(r.copy_only_log[3] == Approx(copy_rows(one.data(), 32, R).mean()).epsilon(1e-12));
  for (double x : r.second_copy) CHECK((x >= 0 && x <= 1));
  CHECK(r.drop.blocks == r.lines);
  CHECK(r.drop.mean == Approx(r.with_first - r.alone).margin(1e-12));
  CHECK(r.with_first > 0);
  CHECK(r.alone > 0);
  // a model of 4 positions repeats lines of one token: nothing predictable, nothing divided by 0
  c.seq_len = 4;
  const RepeatedLines tiny = evaluate_repeated_lines(init_model(c), s, 1);
  CHECK(tiny.drop.blocks == 0);
  CHECK(tiny.with_first == 0);
  CHECK(tiny.lines > 0);
}
