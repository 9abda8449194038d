// Issue 25: lessons about trained models rest on evidence. Korean particles after a filled
// figure, the rule that "chance" / "random" comes with a baseline quantity, the baselines
// themselves (model.chance_accuracy ...), the quality side of GQA (kv_heads), claims over runs
// (model.runs_*), and held-out accuracy pooled per token.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/error.h"
#include "lessons/lesson.h"
#include "lessons/model_quantity.h"
#include "lessons/prose.h"
#include "lessons/quantity.h"
#include "model/training/train.h"

using namespace attnsim;
using namespace attnsim::lessons;

namespace {

double num(const ModelSettings& m, const std::string& field) { return std::get<double>(model_field(m, field)); }

// A one-step lesson on the default scenario; `step` is the rest of the step's TOML.
LoadResult lesson_with(const std::string& step) {
  return load_lesson_text(R"(format = 2
id = "t"
order = 1
title = { ko = "시험", en = "Test" }
summary = { ko = "시험", en = "Test" }
[scenario]
preset = "default"
[[step]]
id = "s"
title = { ko = "단계", en = "Step" }
panel = "tensor"
)" + step,
                          "t.toml");
}

std::vector<Diagnostic> checked(const std::string& step) {
  LoadResult r = lesson_with(step);
  REQUIRE(r.lesson);
  check_lesson(*r.lesson, r.diagnostics);
  return r.diagnostics;
}

bool any_says(const std::vector<Diagnostic>& d, const std::string& what) {
  for (const Diagnostic& x : d)
    if (x.message.find(what) != std::string::npos) return true;
  return false;
}

std::string particle(const std::string& figure, const std::string& pair) {
  return pick_particle(particle_pair_at(pair, 0), korean_final_sound(figure));
}

}  // namespace

// [SECTION] Korean particles --------------------------------------------------------------

TEST_CASE("korean_final_sound: each digit read the Sino-Korean way", "[lessons][particles]") {
  // 영 일 이 삼 사 오 육 칠 팔 구
  const FinalSound want[10] = {FinalSound::Consonant, FinalSound::Rieul, FinalSound::Vowel, FinalSound::Consonant,
                               FinalSound::Vowel,     FinalSound::Vowel, FinalSound::Consonant, FinalSound::Rieul,
                               FinalSound::Rieul,     FinalSound::Vowel};
  for (int d = 0; d < 10; ++d) {
    INFO("digit " << d);
    CHECK(korean_final_sound(std::to_string(d)) == want[d]);
    CHECK(korean_final_sound("1" + std::to_string(d)) == (d == 0 ? FinalSound::Consonant : want[d]));  // 10: 십
  }
  CHECK(particle("0", "은/는") == "은");  // 영은
  CHECK(particle("1", "을/를") == "을");  // 일을
  CHECK(particle("2", "은/는") == "는");  // 이는
  CHECK(particle("3", "와/과") == "과");  // 삼과
  CHECK(particle("4", "이/가") == "가");  // 사가
  CHECK(particle("5", "와/과") == "와");  // 오와
  CHECK(particle("6", "을/를") == "을");  // 육을
  CHECK(particle("7", "으로/로") == "로");  // 칠로: ㄹ takes 로
  CHECK(particle("8", "은/는") == "은");  // 팔은
  CHECK(particle("9", "이/가") == "가");  // 구가
}

TEST_CASE("korean_final_sound: round numbers, separators, decimals, exponents, units, tuples", "[lessons][particles]") {
  CHECK(particle("10", "은/는") == "은");      // 십은
  CHECK(particle("100", "와/과") == "과");     // 백과
  CHECK(particle("1,000", "이/가") == "이");   // 천이
  CHECK(particle("10,000", "을/를") == "을");  // 만을
  CHECK(particle("20000000", "은/는") == "은");  // 이천만
  CHECK(particle("100000000", "은/는") == "은");  // 억은
  CHECK(particle("1000000000000", "은/는") == "는");  // 조는: a vowel
  CHECK(particle("512", "은/는") == "는");     // 오백십이는 (the audit's «512»은)
  CHECK(particle("64", "와/과") == "와");      // 육십사와 (the audit's "64과")
  CHECK(particle("16", "와/과") == "과");      // 십육과
  CHECK(particle("262,144", "이/가") == "가");  // ... 사
  CHECK(particle("4.68", "와/과") == "과");    // 사 점 육팔과 (the audit's "4.68와")
  CHECK(particle("0.5", "이/가") == "가");     // 영 점 오
  CHECK(particle("2.25", "을/를") == "를");    // 이 점 이오
  CHECK(particle("0.10", "은/는") == "은");    // 영 점 일영
  CHECK(particle("1e-7", "으로/로") == "로");  // ... 칠
  CHECK(particle("3e-5", "와/과") == "와");    // ... 오
  CHECK(particle("50%", "을/를") == "를");     // 퍼센트
  CHECK(particle("2 GiB", "은/는") == "는");   // 기비바이트
  CHECK(particle("416 KiB", "와/과") == "와");
  CHECK(particle("(1, 4, 6, 6)", "이/가") == "이");   // ... 육
  CHECK(particle("(96, 16, 4, 1)", "이/가") == "이");  // ... 일
  CHECK(particle("(1, 4, 6, 2)", "이/가") == "가");
  CHECK(particle("3", "으로/로") == "으로");   // 삼으로
  CHECK(particle("NaN", "은/는") == "은");     // 난
  CHECK(particle("헤드", "은/는") == "는");
  CHECK(particle("층", "은/는") == "은");
  CHECK(particle("물", "으로/로") == "로");
  CHECK(korean_final_sound("duplicate-token") == FinalSound::Unknown);
  CHECK(particle("duplicate-token", "은/는") == "");
}

TEST_CASE("particle_pair_at: every pair in either order, markup skipped, nothing else", "[lessons][particles]") {
  for (const char* p : {"은/는", "는/은", "이/가", "가/이", "을/를", "를/을", "와/과", "과/와", "으로/로", "로/으로"}) {
    INFO(p);
    CHECK(particle_pair_at(p, 0).length == std::string(p).size());
  }
  size_t skipped = 0;
  CHECK(particle_pair_at("**은/는", 0, &skipped).length == std::string("은/는").size());
  CHECK(skipped == 2);
  CHECK(particle_pair_at("은 는", 0).length == 0);
  CHECK(particle_pair_at("개", 0).length == 0);
}

TEST_CASE("a filled figure gets the particle its sound takes, in the lesson's Korean text", "[lessons][particles]") {
  // config.heads = 4 (사), config.d_model = 16 in the default scenario (십육)
  LoadResult r = lesson_with(R"(text.ko = "헤드 수 {value:config.heads}은/는 **{value:config.d_model}**을/를 나눈다. {value:config.head_dim}으로/로 된다."
text.en = "{value:config.heads} heads divide {value:config.d_model} into {value:config.head_dim}."
)");
  REQUIRE(r.diagnostics.empty());
  REQUIRE(r.lesson);
  const std::string& ko = r.lesson->steps[0].text.ko;
  INFO(ko);
  CHECK(ko.find("4는") != std::string::npos);
  CHECK(ko.find("**16**을") != std::string::npos);
  CHECK(ko.find("4로") != std::string::npos);
  CHECK(ko.find("/") == std::string::npos);
}

TEST_CASE("lesson check reports a particle that does not fit the figure before it", "[lessons][particles]") {
  const auto wrong = checked(R"(text.ko = "헤드 {value:config.heads}은 적다."
text.en = "{value:config.heads} heads are few."
)");
  CHECK(any_says(wrong, "'4' takes 는, not 은"));
  // the copula and a counter are not particles: 4이다, 4가지
  const auto fine = checked(R"(text.ko = "헤드는 {value:config.heads}이다. {value:config.heads}가지 방법."
text.en = "{value:config.heads} heads, {value:config.heads} ways."
)");
  CHECK_FALSE(any_says(fine, "takes"));
}

TEST_CASE("lesson check reports a wrong particle after a quoted figure or a formula's constant too", "[lessons][particles]") {
  // {quote:512} reads 오백십이: 는, not 은; {math:3} reads 삼: 과, not 와
  const auto wrong = checked(R"(text.ko = "폭 {quote:512}은 그대로, {math:3}와 곱한다."
text.en = "Width {quote:512} stays; times {math:3}."
)");
  CHECK(any_says(wrong, "'512' takes 는, not 은"));
  CHECK(any_says(wrong, "'3' takes 과, not 와"));
  // only a value's pair is filled, so a pair after a quote is refused rather than shown
  const auto pair = checked(R"(text.ko = "폭 {quote:512}은/는 그대로."
text.en = "Width {quote:512} stays."
)");
  CHECK(any_says(pair, "a particle pair after {quote:512} is not filled"));
  const auto fine = checked(R"(text.ko = "폭 {quote:512}는 그대로, {math:3}과 곱한다."
text.en = "Width {quote:512} stays; times {math:3}."
)");
  CHECK_FALSE(any_says(fine, "takes"));
  CHECK_FALSE(any_says(fine, "not filled"));
}

TEST_CASE("lesson check reports the copula's short form after a figure that ends in a consonant", "[lessons][particles]") {
  // config.d_model = 16 (십육): 16다 is wrong, 16이다 right; config.heads = 4 (사): 4다 and 4이다 both fit
  CHECK(bare_copula_at("다.", 0) == "다");
  CHECK(bare_copula_at("**였다", 0) == "였");
  CHECK(bare_copula_at("다음", 0).empty());
  CHECK(bare_copula_at("이다", 0).empty());
  const auto wrong = checked(R"(text.ko = "폭은 {value:config.d_model}다. 폭은 **{value:config.d_model}**였다."
text.en = "The width is {value:config.d_model}."
)");
  CHECK(any_says(wrong, "'16' takes 이다, not 다"));
  CHECK(any_says(wrong, "'16' takes 이었, not 였"));
  const auto fine = checked(R"(text.ko = "폭은 {value:config.d_model}이다. 헤드는 {value:config.heads}다. {value:config.d_model}다음."
text.en = "The width is {value:config.d_model}."
)");
  CHECK_FALSE(any_says(fine, "takes"));
}

// [SECTION] Baselines ---------------------------------------------------------------------

TEST_CASE("chance_words_at: chance and random words, random weights exempt", "[lessons][baselines]") {
  std::vector<std::string> words;
  CHECK(chance_words_at("accuracy at chance level", &words).size() == 1);
  CHECK(words.at(0) == "chance");
  CHECK(chance_words_at("a Random guess, picked randomly").size() == 2);
  CHECK(chance_words_at("random weights; randomly initialised layers; random init").empty());
  CHECK(chance_words_at("perchance, randomness").empty());  // not whole words
  CHECK(chance_words_at("우연 수준이다").size() == 1);
  CHECK(chance_words_at("무작위로 고르면").size() == 1);
  CHECK(chance_words_at("찍기와 다르지 않다").size() == 1);
  CHECK(chance_words_at("무작위 가중치로 초기화한 무작위로 초기화된").empty());
}

TEST_CASE("lesson check fails a step that says chance or random without a baseline quantity", "[lessons][baselines]") {
  const auto bare = checked(R"(text.ko = "정확도는 우연 수준이다."
text.en = "The accuracy is at chance."
)");
  CHECK(any_says(bare, "'chance' names a level with no baseline"));
  CHECK(any_says(bare, "'우연' names a level with no baseline"));
  // with the baseline shown in the same step (here in the short text) it passes
  const auto shown = checked(R"(short = { ko = "기준선 {value:model.chance_accuracy|%}", en = "baseline {value:model.chance_accuracy|%}" }
text.ko = "정확도는 우연 수준이다."
text.en = "The accuracy is at chance."
)");
  CHECK_FALSE(any_says(shown, "no baseline"));
  // through a claim's id
  const auto by_id = checked(R"(text.ko = "무작위로 고르면 {value:ch|%}."
text.en = "A random pick gets {value:ch|%}."
[[step.claim]]
id = "ch"
quantity = "model.chance_accuracy"
at_most = 0.02
)");
  CHECK_FALSE(any_says(by_id, "no baseline"));
  // random weights are an initialisation, not a level
  const auto weights = checked(R"(text.ko = "무작위 가중치로 돌린다."
text.en = "This runs with random weights."
)");
  CHECK_FALSE(any_says(weights, "no baseline"));
}

TEST_CASE("model.* baselines on the shipped checkpoint: 1/64, ln 64, a pick among seen tokens", "[lessons][model][baselines]") {
  const ModelSettings intact;
  CHECK(num(intact, "vocab_targets") == 64);
  CHECK(num(intact, "chance_accuracy") == Approx(1.0 / 64));
  CHECK(num(intact, "uniform_loss") == Approx(std::log(64.0)));
  ModelSettings s500;
  s500.step = 500;
  // the audit's figures for step 500: a uniform pick among seen tokens ~6.6 %, 86 % of the
  // model's top guesses already in the sequence, its 7.6 % accuracy between the two baselines
  CHECK(num(s500, "seen_accuracy") == Approx(0.0662).margin(5e-4));
  CHECK(num(s500, "seen_guess_share") == Approx(0.865).margin(2e-3));
  CHECK(num(s500, "repeat_accuracy") > num(s500, "chance_accuracy"));
  CHECK(num(s500, "repeat_loss") < num(s500, "first_loss"));
  CHECK(num(intact, "seen_guess_share") == 1);  // the trained model copies: every top guess was seen
}

// [SECTION] GQA quality and claims over runs ----------------------------------------------

TEST_CASE("model.* kv_heads: mean-pooled K/V heads without uptraining", "[lessons][model]") {
  ModelSettings g;
  g.kv_heads = 4;
  CHECK(num(g, "repeat_accuracy") == num(ModelSettings{}, "repeat_accuracy"));  // g = h: the model itself
  g.kv_heads = 2;
  CHECK(num(g, "repeat_accuracy") == Approx(0.586).margin(2e-3));
  CHECK(num(g, "kv_heads") == 2);
  g.kv_heads = 1;
  CHECK(num(g, "repeat_accuracy") == Approx(0.056).margin(2e-3));
  CHECK_THROWS_WITH(model_field(g, "best_induction"), Catch::Contains("does not read kv_heads"));
  g.kv_heads = 3;
  CHECK_THROWS_AS(model_field(g, "repeat_accuracy"), Error);  // 3 does not divide 4
}

TEST_CASE("model.runs_*: a recipe's seeds, k of N and the spread", "[lessons][model][runs]") {
  ModelSettings one, eight, eight6k;
  one.runs = "induction-d64-h1,induction-d64-h1-s2,induction-d64-h1-s3";
  eight.runs = "induction-d64-h8,induction-d64-h8-s2,induction-d64-h8-s3";
  eight6k.runs = "induction-d64-h8-6k-s1,induction-d64-h8-6k-s2,induction-d64-h8-6k-s3";
  CHECK(num(one, "runs_count") == 3);
  CHECK(num(one, "runs_learned") == 2);
  CHECK(num(eight, "runs_learned") == 0);
  CHECK(num(eight6k, "runs_learned") == 3);
  // the spread is the runs' own repeat_accuracy
  ModelSettings s3;
  s3.checkpoint = "induction-d64-h1-s3";
  CHECK(num(one, "runs_min") == num(s3, "repeat_accuracy"));
  ModelSettings s1;
  s1.checkpoint = "induction-d64-h1";
  CHECK(num(one, "runs_median") == num(s1, "repeat_accuracy"));
  CHECK(num(one, "runs_min") <= num(one, "runs_median"));
  CHECK(num(one, "runs_median") <= num(one, "runs_max"));
  ModelSettings two;  // an even count: the median is the mean of the middle two
  two.runs = "induction-d64-h1,induction-d64-h1-s2";
  ModelSettings s2;
  s2.checkpoint = "induction-d64-h1-s2";
  CHECK(num(two, "runs_median") == Approx((num(s1, "repeat_accuracy") + num(s2, "repeat_accuracy")) / 2));
  ModelSettings both = one;
  both.checkpoint = "induction";
  CHECK_THROWS_WITH(model_field(both, "runs_count"), Catch::Contains("not checkpoint"));
  CHECK_THROWS_WITH(model_field(one, "repeat_accuracy"), Catch::Contains("runs_* only"));
  CHECK_THROWS_WITH(model_field(ModelSettings{}, "runs_count"), Catch::Contains("give the model table runs"));
  ModelSettings missing;
  missing.runs = "induction-d64-h1,no-such-run";
  CHECK_THROWS_WITH(model_field(missing, "runs_count"), Catch::Contains("no shipped checkpoint 'no-such-run'"));
}

TEST_CASE("lesson check fails a claim over runs that the shipped runs do not bear out", "[lessons][model][runs]") {
  const auto d = checked(R"(text.ko = "시드 {value:k}개"
text.en = "{value:k} seeds"
[[step.claim]]
id = "k"
quantity = "model.runs_learned"
model = { runs = "induction-d64-h8,induction-d64-h8-s2,induction-d64-h8-s3" }
at_least = 1
)");
  CHECK(any_says(d, "model.runs_learned"));
}

// [SECTION] Held-out accuracy per token ---------------------------------------------------

TEST_CASE("pooled_accuracy counts every predictable token once", "[lessons][model]") {
  std::vector<model::RepeatEval> e(2);
  e[0].repeat = 2, e[0].accuracy = 1.0, e[0].predictable = 300;  // short repeats: many per sequence
  e[1].repeat = 20, e[1].accuracy = 0.0, e[1].predictable = 100;
  CHECK(model::pooled_accuracy(e) == Approx(0.75));  // weighting by L - 1 would give 0.05
  ModelSettings h1;
  h1.checkpoint = "induction-d64-h1";
  CHECK(num(h1, "unseen_accuracy") == Approx(0.802).margin(2e-3));  // the audit's per-token 80.2 %
}

TEST_CASE("model.runs_* with of, keep, and the d_k sweep's runs", "[lessons][model][runs]") {
  // of: the spread of any numeric field, each run read under the table's other settings
  ModelSettings loss;
  loss.runs = "induction-d64-h2-6k-s1,induction-d64-h2-6k-s2,induction-d64-h2-6k-s3";
  loss.of = "repeat_loss";
  std::vector<double> each;
  for (const char* run : {"induction-d64-h2-6k-s1", "induction-d64-h2-6k-s2", "induction-d64-h2-6k-s3"}) {
    ModelSettings one;
    one.checkpoint = run;
    each.push_back(num(one, "repeat_loss"));
  }
  std::sort(each.begin(), each.end());
  CHECK(num(loss, "runs_min") == each[0]);
  CHECK(num(loss, "runs_median") == each[1]);
  CHECK(num(loss, "runs_max") == each[2]);
  loss.of = "role";
  loss.layer = 1;
  loss.head = 0;
  CHECK_THROWS_WITH(model_field(loss, "runs_median"), Catch::Contains("not a number"));
  loss.of = "runs_count";
  CHECK_THROWS_WITH(model_field(loss, "runs_median"), Catch::Contains("not a model field a run has"));
  // d_k = 4 (16 heads of a 64-wide model) learns in no seed of 6,000 steps; d_k = 16 in every one
  ModelSettings narrow, mid;
  narrow.runs = "induction-d64-h16-6k-s1,induction-d64-h16-6k-s2,induction-d64-h16-6k-s3";
  mid.runs = "induction-d64-h4-6k-s1,induction-d64-h4-6k-s2,induction-d64-h4-6k-s3";
  CHECK(num(narrow, "runs_learned") == 0);
  CHECK(num(mid, "runs_learned") == 3);
  narrow.of = mid.of = "mean_entropy";
  CHECK(num(narrow, "runs_min") > num(mid, "runs_max"));  // the narrow heads are flatter
  // keep: the loss fields on the model pruned to its most important heads per layer
  ModelSettings pruned;
  pruned.checkpoint = "induction-d64-h8-6k-s1";
  const double intact = num(pruned, "repeat_accuracy");
  pruned.keep = 8;
  CHECK(num(pruned, "repeat_accuracy") == intact);  // keeping every head zeroes none
  pruned.keep = 2;
  CHECK(num(pruned, "repeat_accuracy") < intact);
  CHECK_THROWS_WITH(model_field(pruned, "best_induction"), Catch::Contains("does not read keep"));
  pruned.keep = int64_t{1} << 62;
  CHECK_THROWS_WITH(model_field(pruned, "repeat_accuracy"), Catch::Contains("the model has 8"));
}

TEST_CASE("model.gap_*: the head whose weight on position 0 most exceeds its contribution", "[lessons][model]") {
  ModelSettings m;
  m.checkpoint = "induction";
  const double l = num(m, "gap_layer"), h = num(m, "gap_head");
  ModelSettings one = m;
  one.layer = static_cast<int64_t>(l);
  one.head = static_cast<int64_t>(h);
  CHECK(num(m, "gap_first") == num(one, "first"));
  CHECK(num(m, "gap_contribution") == num(one, "first_contribution"));
  CHECK(num(m, "gap_contribution") < num(m, "gap_first"));
  CHECK(num(m, "gap_size") == num(m, "gap_first") - num(m, "gap_contribution"));
  // no other head has a larger gap
  for (int64_t ll = 0; ll < 2; ++ll)
    for (int64_t hh = 0; hh < 4; ++hh) {
      ModelSettings o = m;
      o.layer = ll;
      o.head = hh;
      CHECK(num(o, "first") - num(o, "first_contribution") <= num(m, "gap_first") - num(m, "gap_contribution"));
    }
}
