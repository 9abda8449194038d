// The whole pass in the model views (views/whole_run.h, sampling_view.h, sampling_figure.h):
//   - a sampling control change recomputes only the sampling steps: the view's pass (its
//     revision, its logits) stays, the chart follows the new options in the same call
//   - the chart marks the kept set (greedy: the arg max alone; top-k: k tokens; top-p: the
//     smallest most-likely-first set reaching p) and the chosen token (sample_row's)
//   - the chart as a figure: no overlapping or cut-off labels, the chosen bar framed, Korean
//   - the logit lens has a row per stage ending at the model's answer; the direct logit
//     attribution's parts sum to the logit, per head as the grid reads them; a picked token
//   - a Hugging Face folder gives the same readings, its top token hf_forward's
//   - the overview: a box per block in order on the stream, the heatmap the run's norms
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "engine/error.h"
#include "engine/npy.h"
#include "figure/slide.h"
#include "model/text/tokenizer.h"
#include "views/hf_view.h"
#include "views/model_view.h"
#include "views/overview_figure.h"
#include "views/sampling_figure.h"

using namespace attnsim;
using namespace attnsim::app;

namespace {

bool have_model() {
  if (std::filesystem::exists(default_model_dir() + "/model.json")) return true;
  WARN("no checkpoint at " << default_model_dir() << ": whole-pass view checks skipped");
  return false;
}

int32_t arg_max(const Tensor& logits) {  // (1,1,V), lowest id on ties
  const float* l = logits.f32();
  return static_cast<int32_t>(std::max_element(l, l + logits.size(2)) - l);
}

model::SamplingOptions sampled(double t, int64_t k, double p, uint64_t seed = 3) {
  model::SamplingOptions o;
  o.temperature = t;
  o.top_k = k;
  o.top_p = p;
  o.seed = seed;
  return o;
}

size_t kept_bars(const SamplingChart& c) {
  return static_cast<size_t>(std::count_if(c.bars.begin(), c.bars.end(), [](const SamplingBar& b) { return b.kept; }));
}

}  // namespace

TEST_CASE("a sampling control change recomputes only the sampling steps, and the chart marks kept and chosen") {
  if (!have_model()) return;
  ModelView v;
  v.load(default_model_dir());
  SamplingView& s = v.sampling();
  REQUIRE(s.ready());
  const uint64_t pass_revision = v.revision();
  const Tensor logits = v.whole().last_logits;  // (1,1,V)
  const int64_t V = v.model().config.vocab;
  REQUIRE(logits.size(2) == V);

  // greedy: the arg max alone is kept and chosen; bars most likely first
  SamplingChart c = s.chart();
  REQUIRE(c.next == arg_max(logits));
  CHECK(c.kept_count == 1);
  CHECK(kept_bars(c) == 1);
  CHECK(c.bars.front().chosen);
  for (size_t i = 1; i < c.bars.size(); ++i) CHECK(c.bars[i - 1].prob >= c.bars[i].prob);

  // top-k 3 at temperature 1: the three most likely kept, the draw one of them, as sample_row draws
  const uint64_t before = s.revision();
  s.set_options(sampled(1.0, 3, 1.0));
  CHECK(s.revision() == before + 1);
  CHECK(v.revision() == pass_revision);                     // no pass ran
  CHECK(v.whole().last_logits.f32() == logits.f32());      // the same cached logits
  c = s.chart();
  CHECK(c.kept_count == 3);
  for (size_t i = 0; i < c.bars.size(); ++i) CHECK(c.bars[i].kept == (i < 3));
  const model::SampledRow row = model::sample_row(logits.f32(), V, sampled(1.0, 3, 1.0));
  CHECK(c.next == row.next);
  CHECK(std::any_of(c.bars.begin(), c.bars.end(), [](const SamplingBar& b) { return b.chosen && b.kept; }));

  // top-p 0.6: the smallest most-likely-first prefix whose mass reaches 0.6
  s.set_options(sampled(1.5, 0, 0.6));
  c = s.chart(static_cast<int>(V));
  REQUIRE(c.kept_count >= 1);
  double before_last = 0;
  for (int64_t i = 0; i + 1 < c.kept_count; ++i) before_last += c.bars[static_cast<size_t>(i)].prob;
  CHECK(before_last < 0.6);
  CHECK(c.kept_mass >= 0.6 - 1e-6);
  for (size_t i = 0; i < c.bars.size(); ++i) CHECK(c.bars[i].kept == (static_cast<int64_t>(i) < c.kept_count));

  // the same seed draws the same token; a bad option is refused and changes nothing
  const int32_t drawn = c.next;
  s.set_options(sampled(1.5, 0, 0.6));
  CHECK(s.chart().next == drawn);
  CHECK_THROWS_AS(s.set_options(sampled(1.0, 0, 0.0)), Error);
  CHECK_THROWS_AS(s.set_options(sampled(1.0, V + 1, 1.0)), Error);
  CHECK(s.options().top_p == Approx(0.6));
  // a new sequence gives new logits and keeps the options
  v.set_text("abcabc");
  CHECK(s.options().top_p == Approx(0.6));
  CHECK(s.chart().next == model::sample_row(v.whole().last_logits.f32(), V, sampled(1.5, 0, 0.6)).next);
  INFO("sampling steps recomputed in " << s.compute_ms() << " ms (benchmark, not a timed test)");
}

TEST_CASE("the sampling chart as a slide: labels in place, the chosen bar framed, Korean words") {
  if (!have_model()) return;
  ModelView v;
  v.load(default_model_dir());
  v.sampling().set_options(sampled(2.0, 8, 0.9, 11));
  const SamplingChart c = v.sampling().chart();
  const TokenLabel label = [](int32_t id) { return model::token_label(id); };
  for (Lang lang : {Lang::En, Lang::Ko}) {
    const figure::Figure f = sampling_slide(c, label, "next token", lang, "print");
    CHECK(figure::overlapping_texts(f).empty());
    CHECK(figure::texts_outside(f).empty());
    bool framed = false, chosen_text = false;
    for (const auto& item : f.items) {
      if (const auto* b = std::get_if<figure::Box>(&item)) framed |= b->stroke_width > 0;
      if (const auto* t = std::get_if<figure::Text>(&item))
        chosen_text |= t->text == (lang == Lang::Ko ? "← 선택" : "← chosen");
    }
    CHECK(framed);
    CHECK(chosen_text);
  }
  // bar lengths in proportion to the probabilities
  figure::Figure f;
  const SamplingLayout l = add_sampling_chart(f, figure::print_theme(), {0, 0, 1600, 800}, c, label, Lang::En);
  REQUIRE(c.bars.size() >= 2);
  CHECK(l.bars[1].w / l.bars[0].w == Approx(c.bars[1].prob / c.bars[0].prob).epsilon(0.02));
  CHECK(c.bars[l.chosen].chosen);
}

TEST_CASE("the logit lens ends at the model's answer and the direct logit attribution sums to the logit") {
  if (!have_model()) return;
  ModelView v;
  v.load(default_model_dir());
  const WholeRun& w = v.whole();
  const int64_t L = v.model().config.layers, H = v.model().config.heads, T = static_cast<int64_t>(v.tokens().size());
  REQUIRE(w.layers() == L);
  for (const auto& stage : w.stream_norm) {
    REQUIRE(static_cast<int64_t>(stage.size()) == T);
    for (double n : stage) CHECK((std::isfinite(n) && n > 0));
  }
  REQUIRE(static_cast<int64_t>(w.lens.rows.size()) == L + 1);
  CHECK(w.lens.rows.front().stage == "embed");
  CHECK(w.lens.target == arg_max(w.last_logits));
  CHECK(w.lens.rows.back().top == w.lens.target);
  // the grid's cells and the direct paths are every part, once
  CHECK(w.dla.token == w.lens.target);
  CHECK(w.dla.sum() == Approx(w.dla.logit).margin(1e-4));
  double heads = 0;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t h = 0; h < H; ++h) heads += head_part(w.dla, l, h);
  double direct = 0;
  for (const auto& p : direct_parts(w.dla)) direct += p.value;
  CHECK(direct_parts(w.dla).size() + static_cast<size_t>(L * H) == w.dla.parts.size());
  CHECK(heads + direct == Approx(w.dla.logit).margin(1e-4));

  // a picked token: its own logit split; ablation leaves the readings of the pass as trained
  const int32_t other = (w.lens.target + 1) % static_cast<int32_t>(v.model().config.vocab);
  v.set_dla_token(other);
  CHECK(v.whole().dla.token == other);
  CHECK(v.whole().dla.sum() == Approx(v.whole().dla.logit).margin(1e-4));
  CHECK(v.whole().dla.logit == Approx(v.whole().last_logits.f32()[other]).margin(1e-5));
  const double before = head_part(v.whole().dla, 0, 0);
  v.toggle({0, 0});
  CHECK(v.is_ablated({0, 0}));
  CHECK(head_part(v.whole().dla, 0, 0) == before);
  CHECK_THROWS_AS(v.set_dla_token(static_cast<int32_t>(v.model().config.vocab)), Error);
  CHECK(v.dla_token() == other);
  v.set_dla_token(-1);
  CHECK(v.whole().dla.token == v.whole().lens.target);
}

TEST_CASE("a Hugging Face folder: the whole pass's top token is hf_forward's, and sampling reads its logits") {
  HfView v;
  const std::string dir = std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/hf_gpt2_f32";
  v.load(dir);
  std::vector<int32_t> ids;
  for (float t : read_npy(dir + "/tokens.npy").to_vector()) ids.push_back(static_cast<int32_t>(t));
  v.set_tokens(ids);
  v.wait();
  REQUIRE(v.error().empty());
  const auto r = v.run();
  REQUIRE(r->whole);
  REQUIRE(static_cast<int64_t>(r->whole->lens.rows.size()) == v.config().layers + 1);
  CHECK(r->whole->lens.target == r->top.front().token);
  CHECK(v.sampling().chart().next == r->top.front().token);
  CHECK(r->whole->dla.sum() == Approx(r->whole->dla.logit).margin(1e-4));
  v.set_dla_token(r->top[1].token);
  v.wait();
  CHECK(v.run()->whole->dla.token == r->top[1].token);
  CHECK_THROWS_AS(v.set_dla_token(static_cast<int32_t>(v.config().vocab)), Error);
}

TEST_CASE("the overview: a box per block on the stream, the norms heatmap is the run's, labels in place") {
  if (!have_model()) return;
  ModelView v;
  v.load(default_model_dir());
  OverviewInput in;
  in.run = &v.whole();
  for (int32_t t : v.tokens()) in.tokens.push_back(model::token_label(t));
  in.answer = model::token_label(v.whole().lens.target);
  in.mlp = v.model().config.mlp;
  const int64_t L = v.model().config.layers, T = static_cast<int64_t>(v.tokens().size());
  for (Lang lang : {Lang::En, Lang::Ko}) {
    const figure::Figure f = overview_slide(in, "overview", lang, "projector");
    CHECK(figure::overlapping_texts(f).empty());
    CHECK(figure::texts_outside(f).empty());
  }
  figure::Figure f;
  const OverviewLayout l = add_overview(f, figure::print_theme(), {0, 0, 1800, 900}, in, Lang::En);
  REQUIRE(static_cast<int64_t>(l.blocks.size()) == L);
  for (int64_t i = 1; i < L; ++i) CHECK(l.blocks[static_cast<size_t>(i - 1)].right() <= l.blocks[static_cast<size_t>(i)].x);
  CHECK(l.embed.right() <= l.blocks.front().x);
  CHECK(l.blocks.back().right() <= l.logits.x);
  const auto& hm = std::get<figure::Heatmap>(f.items[l.norm_item]);
  REQUIRE(hm.rows == T);
  REQUIRE(hm.cols == L + 1);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s <= L; ++s)
      CHECK(hm.values[static_cast<size_t>(t * (L + 1) + s)] ==
            static_cast<float>(v.whole().stream_norm[static_cast<size_t>(s)][static_cast<size_t>(t)]));
}
