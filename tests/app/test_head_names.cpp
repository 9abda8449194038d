// Heads named in plain words (views/head_names.h) and steps shown by display name
// (views/step_names.h):
//   - the chance is uniform causal attention's score on the same tokens, worked out by hand
//   - a head that puts all its weight on one pattern is named by it, with score 1
//   - the strongest pattern is the largest lift over chance, not the largest ratio
//   - a cell gets the longest form that fits, never a cut one; the tooltip is a sentence
//   - every step of the pass has a display name in both languages; the lens slide shows them
//   - the attribution's target is chosen among the likeliest next words, the first the model's own
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/trace.h"
#include "model/training/heads.h"
#include "model/pass/whole_pass.h"
#include "views/head_names.h"
#include "views/lens_figure.h"
#include "views/model_view.h"
#include "views/step_names.h"

using namespace attnsim;
using namespace attnsim::app;

namespace {

// One sequence's attention (1,T,T) putting all of row i's weight on key `to(i)`.
template <class F>
std::vector<float> one_hot_pattern(int64_t T, F to) {
  std::vector<float> a(static_cast<size_t>(T * T), 0.0f);
  for (int64_t i = 0; i < T; ++i) a[static_cast<size_t>(i * T + to(i))] = 1.0f;
  return a;
}

float chars(const std::string& s) { return static_cast<float>(s.size()); }

// Scores with 1 for the pattern's own score and 0 elsewhere.
model::HeadScores only(HeadPattern p) {
  model::HeadScores s;
  const model::HeadScores none;
  s.first = s.previous = s.induction = s.duplicate = s.diagonal = 0;
  for (double model::HeadScores::*f : {&model::HeadScores::first, &model::HeadScores::previous, &model::HeadScores::induction,
                                       &model::HeadScores::duplicate, &model::HeadScores::diagonal}) {
    model::HeadScores t = none;
    t.*f = 1;
    if (pattern_name(p, t, none).score == 1) s.*f = 1;
  }
  return s;
}

}  // namespace

TEST_CASE("head names: the chance is uniform attention's score on the same tokens") {
  // BOS + r + r, r = 1 2 3: rows 1..6 see 2..7 keys.
  const std::vector<int32_t> tok = {0, 1, 2, 3, 1, 2, 3};
  const model::HeadScores c = chance_scores(tok.data(), 1, 7);
  const double first = (1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 / 5 + 1.0 / 6 + 1.0 / 7) / 6;
  CHECK(c.first == Approx(first));
  CHECK(c.previous == Approx(first));  // one previous token per row, the same 1/(i+1)
  CHECK(c.diagonal == Approx(first));
  // Induction targets: row 4 (token 1) -> key 2, row 5 -> key 3, row 6 -> key 4: one each.
  CHECK(c.induction == Approx((1.0 / 5 + 1.0 / 6 + 1.0 / 7) / 3));
  // Duplicate targets: the earlier copy, one each in rows 4..6.
  CHECK(c.duplicate == Approx((1.0 / 5 + 1.0 / 6 + 1.0 / 7) / 3));
  // Longer sequences spread thinner: the chance depends on the tokens, it is no constant.
  const std::vector<int32_t> longer = {0, 1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7};
  CHECK(chance_scores(longer.data(), 1, 15).first < c.first);
  // Batch and list-of-sequences forms agree with the pointer form.
  model::Batch b;
  b.batch = 2;
  b.len = 7;
  b.tokens = tok;
  b.tokens.insert(b.tokens.end(), tok.begin(), tok.end());
  CHECK(chance_scores(b).induction == Approx(c.induction));
  CHECK(chance_scores(std::vector<std::vector<int32_t>>{tok, tok}).first == Approx(c.first));
}

TEST_CASE("head names: a head with all its weight on one pattern is named by it") {
  const std::vector<int32_t> tok = {0, 1, 2, 3, 4, 1, 2, 3, 4};
  const int64_t T = static_cast<int64_t>(tok.size());
  const model::HeadScores chance = chance_scores(tok.data(), 1, T);
  auto named = [&](const std::vector<float>& a) { return name_head(model::score_pattern(a.data(), tok.data(), 1, T), chance); };

  const HeadName first = named(one_hot_pattern(T, [](int64_t) { return 0; }));
  CHECK(first.pattern == HeadPattern::FirstToken);
  CHECK(first.score == Approx(1.0));
  CHECK(first.chance == Approx(chance.first));
  CHECK(first.lift() == Approx(1.0));

  const HeadName prev = named(one_hot_pattern(T, [](int64_t i) { return i > 0 ? i - 1 : 0; }));
  CHECK(prev.pattern == HeadPattern::PreviousToken);
  CHECK(prev.score == Approx(1.0));

  // Induction: the second copy's rows look at the token after the first copy (i - 4 + 1).
  const HeadName ind = named(one_hot_pattern(T, [](int64_t i) { return i >= 5 ? i - 3 : i; }));
  CHECK(ind.pattern == HeadPattern::Induction);
  CHECK(ind.score == Approx(1.0));
  CHECK(ind.chance == Approx(chance.induction));

  const HeadName self = named(one_hot_pattern(T, [](int64_t i) { return i; }));
  CHECK(self.pattern == HeadPattern::CurrentToken);
}

TEST_CASE("head names: the strongest pattern is the largest lift over chance and not the largest ratio") {
  model::HeadScores head, chance;
  head.first = 0.5;
  chance.first = 0.1;       // lift 0.44, ratio 5
  head.induction = 0.12;
  chance.induction = 0.01;  // lift 0.11, ratio 12
  chance.previous = chance.diagonal = 0.1;
  chance.duplicate = 0.01;
  const HeadName n = name_head(head, chance);
  CHECK(n.pattern == HeadPattern::FirstToken);
  CHECK(n.lift() == Approx(0.4 / 0.9));
  // Below chance everywhere: the least negative lift still names it (every head gets a name).
  model::HeadScores flat;
  flat.first = 0.095;  // lift -0.0056; induction and duplicate at 0 of 0.01: -0.0101
  flat.previous = 0.02;
  CHECK(name_head(flat, chance).pattern == HeadPattern::FirstToken);
}

TEST_CASE("head names: words and forms that fit and a sentence in English and Korean") {
  const HeadName n{HeadPattern::FirstToken, 0.912, 0.0634};
  CHECK(head_name_text(n, Lang::En) == "first token 0.91 · chance 0.06");
  CHECK(head_name_text(n, Lang::Ko) == "첫 토큰 0.91 · 우연 0.06");
  const HeadName p{HeadPattern::PreviousToken, 0.26, 0.03};
  CHECK(head_name_text(p, Lang::En) == "previous token 0.26 · chance 0.03");
  const std::vector<std::string> forms = head_name_forms(p, Lang::En);
  REQUIRE(forms.size() == 5);
  for (size_t i = 1; i < forms.size(); ++i) CHECK(forms[i].size() < forms[i - 1].size());
  CHECK(fit_head_name(p, Lang::En, 200, chars) == forms[0]);
  CHECK(fit_head_name(p, Lang::En, chars("previous token 0.26"), chars) == "previous token 0.26");
  CHECK(fit_head_name(p, Lang::En, chars("prev. 0.26"), chars) == "prev. 0.26");
  CHECK(fit_head_name(p, Lang::En, 2, chars).empty());  // nothing fits: no name, never a cut one
  CHECK(head_name_sentence(n, Lang::En) ==
        "This head puts 91 % of its weight on the first token; a head that spread evenly would put 6 % there.");
  CHECK(head_name_sentence(n, Lang::Ko) == "이 헤드는 가중치의 91 %를 첫 토큰에 둔다. 고르게 나누는 헤드라면 6 %를 둘 것이다.");
  for (HeadPattern pat : kHeadPatterns) {
    const HeadName h{pat, 0.5, 0.1};
    INFO(pattern_role(pat));
    CHECK(head_name_sentence(h, Lang::En).find("50 %") != std::string::npos);
    CHECK(head_name_sentence(h, Lang::Ko) != head_name_sentence(h, Lang::En));
    CHECK(pattern_word(pat, Lang::Ko) != pattern_word(pat, Lang::En));
    CHECK(model::role_score(only(pat), pattern_role(pat)) == 1.0);  // the role label of the same score
  }
}

TEST_CASE("step names: every step of the pass has a display name in English and Korean") {
  CHECK(step_display_name("tok_embed", Lang::En) == "token embedding");
  CHECK(step_display_name("tok_embed", Lang::Ko) == "토큰 임베딩");
  CHECK(step_display_name("layer_0", Lang::En) == "block 0");
  CHECK(step_display_name("layer_12", Lang::Ko) == "블록 12");
  CHECK(step_display_name("layer_0/mlp", Lang::En) == "block 0 · MLP");
  CHECK(step_display_name("layer_0/mlp", Lang::Ko) == "블록 0 · MLP");
  CHECK(step_display_name("layer_2/head_1", Lang::En) == "head 2.1");
  CHECK(step_display_name("layer_1/mlp_act", Lang::Ko) == "블록 1 · MLP 활성화");
  CHECK(step_display_name("alpha", Lang::En) == "attention weights");
  // Not a step: returned as it is.
  CHECK(step_display_name("layer_x", Lang::En) == "layer_x");
  CHECK(step_display_name("layer_1/nothing", Lang::En) == "layer_1/nothing");
  CHECK(step_display_name("layer_", Lang::En) == "layer_");
  CHECK_FALSE(has_step_display_name("nothing"));
  std::vector<std::string> all;
  for (const char* s : kStepNames) all.push_back(s);
  for (const char* s : model::kEmbedSteps) all.push_back(s);
  for (const char* s : model::kHeadSteps) all.push_back(s);
  for (const char* s : model::kBlockSteps) all.push_back(std::string("layer_3/") + s);
  for (const char* s : {"embed", "layer_0", "bias", "layer_0/attn_bias", "layer_0/mlp", "layer_0/head_0"}) all.push_back(s);
  for (const std::string& s : all) {
    INFO(s);
    CHECK(has_step_display_name(s));
    CHECK(step_display_name(s, Lang::Ko) != s);
    const std::string en = step_display_name(s, Lang::En);
    CHECK(en.find('_') == std::string::npos);  // words, not an identifier
  }
}

TEST_CASE("head names: the shipped language model's sinks are named first token against the chance on screen") {
  ModelView v;
  v.load(start_model_dir());
  const model::HeadScores& c = v.shown().chance;
  // The chance is uniform attention on the sequence on screen: the first-token share is the
  // mean over rows i >= 1 of 1/(i+1).
  const auto T = static_cast<int64_t>(v.tokens().size());
  double mean = 0;
  for (int64_t i = 1; i < T; ++i) mean += 1.0 / static_cast<double>(i + 1);
  CHECK(c.first == Approx(mean / static_cast<double>(T - 1)));
  // Heads the old labels called "mixed": a sink is now named by its first token.
  int sinks = 0, mixed = 0;
  for (int64_t l = 0; l < v.roles().layers; ++l)
    for (int64_t h = 0; h < v.roles().heads; ++h) {
      const HeadName n = name_head(v.shown().patterns.at(l, h), c);
      mixed += v.role(l, h) == "mixed";
      if (n.pattern == HeadPattern::FirstToken && n.score > 0.8) ++sinks;
      CHECK(n.lift() >= 0);  // every head's strongest pattern is at least at chance
    }
  CHECK(mixed > 0);
  CHECK(sinks >= 1);
  // The scoring batch's chance is its own: held-out lines repeated are longer than the sentence.
  CHECK(v.roles_chance().first < c.first);
  CHECK(v.head_name(0, 0).chance == Approx(name_head(v.roles().at(0, 0), v.roles_chance()).chance));
}

TEST_CASE("words not identifiers: the lens slide names its stages and the attribution offers the likeliest words") {
  ModelView v;
  v.load(start_model_dir());
  const WholeRun& run = v.whole();
  const std::vector<TokenChoice> top = top_token_choices(run, 10);
  REQUIRE(top.size() == 10);
  CHECK(top[0].id == run.dla.token);  // the model's answer, which the attribution starts on
  CHECK(top[0].id == run.lens.target);
  double sum = 0;
  for (size_t i = 0; i < top.size(); ++i) {
    sum += top[i].prob;
    if (i) CHECK(top[i].prob <= top[i - 1].prob);
  }
  CHECK(sum <= 1.0 + 1e-9);
  CHECK(top[0].prob > 0.5);  // the shipped model is sure of its answer on the default sentence
  for (Lang lang : {Lang::En, Lang::Ko}) {
    const figure::Figure f = lens_slide(run, v.model().config.heads, v.labeller(), lang, "print");
    bool block = false, identifier = false;
    for (const auto& it : f.items)
      if (const auto* t = std::get_if<figure::Text>(&it)) {
        block = block || t->text == step_display_name("layer_0", lang);
        identifier = identifier || t->text.find("layer_") != std::string::npos || t->text.find("tok_embed") != std::string::npos;
      }
    CHECK(block);
    CHECK_FALSE(identifier);
  }
}
