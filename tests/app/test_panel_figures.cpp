// The working flash and memory panels draw the slides' figures (flash_view.h, memory_slides.h
// memory_view): what panel_flash.cpp / panel_memory.cpp hand to the ImGui sink is read back
// here and compared with the exported slide and with the engine.
//   - flash: at every event, the panel's tile figure has the slide's m / l / rescale texts row
//     by row, the slide's grid values and as many tile boxes; the output rows so far are the
//     engine's flash_partial_output, the exact output is the correct run's (a bug scenario),
//     and they meet at the last event
//   - the mask-inverted caption (en, ko) on the panel and the slide; none without a bug
//   - memory: the panel's strip holds the storage values in storage order, walks the engine's
//     storage_index order, and has the slide's headline and detail; a copy in motion leaves
//     exactly the cells not written yet blank
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <variant>

#include "app/cost_slides.h"
#include "app/flash_slides.h"
#include "app/flash_view.h"
#include "app/memory_slides.h"
#include "app/session.h"
#include "engine/flash.h"
#include "engine/mha.h"
#include "figure/memory_figure.h"
#include "figure/palette.h"
#include "figure/slide.h"

using namespace attnsim;
using namespace attnsim::app;
namespace fig = attnsim::figure;

namespace {

std::shared_ptr<const RunData> run_of(Session& s, const std::string& scenario) {
  s.load(scenario);
  s.wait();
  REQUIRE(s.error().empty());
  REQUIRE(s.data());
  return s.data();
}

const std::string& text_at(const fig::Figure& f, size_t i) { return std::get<fig::Text>(f.items.at(i)).text; }

std::vector<std::string> texts_with_role(const fig::Figure& f, const std::string& role) {
  std::vector<std::string> out;
  for (const fig::Item& i : f.items)
    if (const auto* t = std::get_if<fig::Text>(&i); t && t->role == role) out.push_back(t->text);
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

const fig::Heatmap* heatmap_at(const fig::Figure& f, const fig::Rect& r) {
  for (const fig::Item& i : f.items)
    if (const auto* h = std::get_if<fig::Heatmap>(&i); h && h->rect.x == r.x && h->rect.y == r.y) return h;
  return nullptr;
}

}  // namespace

TEST_CASE("the flash panel draws the slide's tile figure at every event, and its output rows converge") {
  Session s;
  const auto d = run_of(s, "mask-inverted");  // a bug the tiled walk does not reproduce
  const int64_t batch = 1, head = 2, bq = 2, bk = 2;
  const FlashCoreResult core = flash_tile_trace(*d, batch, head, bq, bk);
  const auto& ev = core.events;
  REQUIRE(ev.size() >= 9);
  const int64_t tq = d->config.tq, dk = d->config.head_dim();
  const Tensor& exact = d->reference.trace.at("ctx_heads").out;
  const Tensor& buggy = d->run.trace.at("ctx_heads").out;
  bool differs = false;  // the buggy run's output is not what the panel compares with
  for (size_t e = 0; e < ev.size(); ++e) {
    INFO("event " << e);
    FlashViewSpec spec;
    spec.run = d.get();
    spec.core = &core;
    spec.batch = batch;
    spec.head = head;
    spec.block_q = bq;
    spec.block_k = bk;
    spec.event = e;
    spec.width = 1700;
    spec.height = 860;
    const FlashView v = flash_view(spec);
    SlideView sv;
    sv.batch = batch;
    sv.head = head;
    const fig::Figure slide = flash_slide(s.scenario(), *d, core, bq, bk, e, sv);
    // The slide's tile figure read back: add_flash_tiles with the slide's input on a slide's
    // visual (the builder is deterministic; flash_slide keeps no layout).
    fig::Figure again;
    const fig::FlashTilesLayout sl =
        fig::add_flash_tiles(again, fig::theme_by_name("print"), fig::make_slide({}, fig::print_theme()).visual,
                             flash_tiles_input(*d, core, batch, bq, bk, e), flash_words(lessons::Lang::En));
    REQUIRE(v.tiles.rows == sl.rows);  // T = 6: every row listed in both
    REQUIRE(v.tiles.rows.size() == static_cast<size_t>(tq));
    for (size_t r = 0; r < sl.rows.size(); ++r) {
      CHECK(text_at(v.figure, v.tiles.m_text[r]) == text_at(again, sl.m_text[r]));
      CHECK(text_at(v.figure, v.tiles.l_text[r]) == text_at(again, sl.l_text[r]));
      CHECK((v.tiles.rescale_text[r] == SIZE_MAX) == (sl.rescale_text[r] == SIZE_MAX));
      if (sl.rescale_text[r] != SIZE_MAX) CHECK(text_at(v.figure, v.tiles.rescale_text[r]) == text_at(again, sl.rescale_text[r]));
    }
    // the slide itself carries those texts
    const auto slide_values = texts_with_role(slide, "value");
    const std::multiset<std::string> in_slide(slide_values.begin(), slide_values.end());
    for (size_t i : v.tiles.m_text) CHECK(in_slide.count(text_at(v.figure, i)) > 0);
    CHECK(v.tiles.tile_boxes.size() == sl.tile_boxes.size());
    const fig::Heatmap* pg = heatmap_at(v.figure, v.tiles.grid);
    const fig::Heatmap* sg = heatmap_at(again, sl.grid);
    REQUIRE(pg);
    REQUIRE(sg);
    CHECK(pg->values == sg->values);
    CHECK(fig::overlapping_texts(v.figure).empty());
    CHECK(fig::texts_outside(v.figure).empty());

    // O/l so far: the engine's partial output of each block's latest event; exact: the correct run.
    for (int64_t q = 0; q < tq; ++q) {
      const FlashEvent* last = nullptr;
      for (size_t i = 0; i <= e; ++i)
        if (ev[i].kind != FlashEventKind::Skipped && q >= ev[i].q0 && q < ev[i].q0 + ev[i].rows) last = &ev[i];
      CHECK(v.reached[static_cast<size_t>(q)] == (last != nullptr));
      for (int64_t j = 0; j < dk; ++j) {
        const size_t k = static_cast<size_t>(q * dk + j);
        CHECK(v.exact[k] == exact.at({batch, head, q, j}));
        differs |= v.exact[k] != buggy.at({batch, head, q, j});
        if (!last) continue;
        const float want = flash_partial_output(*last).at({q - last->q0, j});
        if (std::isnan(want)) CHECK(std::isnan(v.now[k]));
        else CHECK(v.now[k] == want);
      }
    }
    REQUIRE(v.outputs.size() == 2);
    const fig::Heatmap* now = heatmap_at(v.figure, v.outputs[0]);
    REQUIRE(now);
    CHECK(now->rows == tq);
    CHECK(now->cols == dk);
  }
  CHECK(differs);
  // At the last event every row is final: the tiled output equals the correct run to rounding.
  FlashViewSpec spec;
  spec.run = d.get();
  spec.core = &core;
  spec.batch = batch;
  spec.head = head;
  spec.block_q = bq;
  spec.block_k = bk;
  spec.event = ev.size() - 1;
  const FlashView last = flash_view(spec);
  for (bool r : last.reached) CHECK(r);
  CHECK(last.worst < 1e-5);
  CHECK_THROWS(flash_view([&] { auto x = spec; x.event = ev.size(); return x; }()));
}

TEST_CASE("mask-inverted: the panel and the slide say the tiled walk uses the intended mask (en, ko); no caption without a bug") {
  Session s;
  const auto d = run_of(s, "mask-inverted");
  const std::string en = flash_bug_caption(d->config, lessons::Lang::En);
  const std::string ko = flash_bug_caption(d->config, lessons::Lang::Ko);
  CHECK(en == "The tiled walk uses the intended mask (causal), not this scenario's mask-inverted bug.");
  CHECK(ko.find("의도한 마스크(causal)") != std::string::npos);
  CHECK(ko.find("mask-inverted") != std::string::npos);
  const FlashCoreResult core = flash_tile_trace(*d, 1, 0, 2, 2);
  for (lessons::Lang lang : {lessons::Lang::En, lessons::Lang::Ko}) {
    FlashViewSpec spec;
    spec.run = d.get();
    spec.core = &core;
    spec.batch = 1;
    spec.block_q = spec.block_k = 2;
    spec.lang = lang;
    const FlashView v = flash_view(spec);
    REQUIRE(v.caption != SIZE_MAX);
    CHECK(joined(texts_with_role(v.figure, "caption")) == (lang == lessons::Lang::Ko ? ko : en));
    SlideView sv;
    sv.batch = 1;
    sv.lang = lang;
    CHECK(joined(texts_with_role(flash_slide(s.scenario(), *d, core, 2, 2, 0, sv), "caption")) ==
          (lang == lessons::Lang::Ko ? ko : en));
  }
  Session plain;
  const auto p = run_of(plain, "default");
  CHECK(flash_bug_caption(p->config, lessons::Lang::En).empty());
  const FlashCoreResult pc = flash_tile_trace(*p, 0, 0, 2, 2);
  FlashViewSpec spec;
  spec.run = p.get();
  spec.core = &pc;
  spec.block_q = spec.block_k = 2;
  CHECK(flash_view(spec).caption == SIZE_MAX);
  // the tiled trace uses the run's own scale rule
  CHECK(attention_scale(p->config) == 1.0f / std::sqrt(static_cast<float>(p->config.head_dim())));
  MhaConfig no_scale = p->config;
  no_scale.bug = Bug::NoScale;
  CHECK(attention_scale(no_scale) == 1.0f);
}

TEST_CASE("the memory panel draws the memory slide's strip: storage order, the engine's walk, the same headline") {
  Session s;
  const auto d = run_of(s, "default");
  for (const char* name : {"q_heads", "q_view", "ctx_contiguous"}) {
    INFO(name);
    const Step& step = d->run.trace.at(name);
    MemoryViewSpec spec;
    spec.run = d.get();
    spec.step = &step;
    spec.width = 1280;
    spec.height = 420;
    const MemoryView v = memory_view(spec);
    const bool copy = step.kind == StepKind::Copy;
    REQUIRE(v.layout.strips.size() == (copy ? 2u : 1u));
    // the last strip is the step's own storage: values in storage order, the walk in logical order
    const fig::StripCells sc = fig::strip_cells(step.out, 0);
    CHECK(v.layout.base.back() == sc.base);
    CHECK(v.layout.cells.back() == static_cast<int64_t>(sc.values.size()));
    const fig::Heatmap* h = heatmap_at(v.figure, v.layout.strips.back());
    REQUIRE(h);
    for (size_t c = 0; c < sc.values.size(); ++c) CHECK(h->values[c] == sc.values[c]);
    const auto& walked = v.layout.walked.back();
    REQUIRE(!walked.empty());
    for (size_t e = 0; e < walked.size(); ++e) {
      // the engine's own answer: the storage index of logical element e
      int64_t idx = static_cast<int64_t>(e), pos = step.out.offset();
      const Dims& sh = step.out.shape();
      for (size_t k = sh.size(); k-- > 0;) {
        pos += idx % sh[k] * step.out.strides()[k];
        idx /= sh[k];
      }
      CHECK(walked[e] + sc.base == pos);
    }
    // the slide's headline and detail, word for word
    SlideView sv;
    sv.step = name;
    sv.batch = 0;
    sv.panel = "memory";
    const fig::Figure slide = memory_slide(s.scenario(), *d, sv);
    const auto slide_labels = texts_with_role(slide, "label");
    const std::set<std::string> in_slide(slide_labels.begin(), slide_labels.end());
    const fig::MemorySpec ms = memory_spec(*d, step, 0, lessons::Lang::En);
    CHECK(in_slide.count(ms.headline) == 1);
    const auto panel_labels = texts_with_role(v.figure, "label");
    CHECK(std::count(panel_labels.begin(), panel_labels.end(), ms.headline) == 1);
    CHECK(fig::overlapping_texts(v.figure).empty());
    CHECK(fig::texts_outside(v.figure).empty());
  }
}

TEST_CASE("a copy in motion: the new strip's cells not written yet are blank, exactly") {
  Session s;
  const auto d = run_of(s, "default");
  const Step& step = d->run.trace.at("ctx_contiguous");
  MemoryViewSpec spec;
  spec.run = d.get();
  spec.step = &step;
  spec.width = 1280;
  spec.height = 420;
  const size_t items_done = memory_view(spec).figure.items.size();
  for (float arrived : {0.0f, 0.3f, 0.5f, 1.0f}) {
    INFO("arrived " << arrived);
    spec.arrived = arrived;
    const MemoryView v = memory_view(spec);
    const fig::Rect& r = v.layout.strips.back();
    const float cell = r.w / static_cast<float>(v.layout.wrap);
    const int64_t count = v.layout.cells.back();
    const int64_t blank = count - static_cast<int64_t>(std::lround(arrived * static_cast<double>(count)));
    // the boxes inside the new strip without a stroke are the blanks (plus a short last row's end)
    double area = 0;
    for (size_t i = 0; i < v.figure.items.size(); ++i)
      if (const auto* b = std::get_if<fig::Box>(&v.figure.items[i]);
          b && b->stroke.a == 0 && r.contains(b->rect) && b->fill != fig::theme_by_name("projector").background)
        area += static_cast<double>(b->rect.w) * b->rect.h;
    CHECK(area == Approx(static_cast<double>(blank) * cell * cell).epsilon(1e-4));
    if (arrived == 1.0f) CHECK(v.figure.items.size() == items_done);
  }
}

TEST_CASE("the Figures panel draws the cost slide's table, rows packed at the UI's text size") {
  const std::vector<StepFigure> figures = {
      {"cost.score_bytes_layer", "B=1 T=4096 h=8", "536,870,912 B (512 MiB, 537 MB)"},
      {"cost.params", "d=512", "1,048,576"},
      {"flash.traffic_ratio", "T=4096", "7.647"}};
  for (lessons::Lang lang : {lessons::Lang::En, lessons::Lang::Ko}) {
    const CostView v = cost_view(figures, lang, "projector", 1200);
    REQUIRE(v.layout.rows_shown == figures.size());
    CHECK(v.layout.size == fig::kLabelMin);
    CHECK(v.figure.height == Approx(v.layout.bottom + 12));
    CHECK(v.figure.height < 400);  // packed: three rows and the header, not spread over a slide
    SlideView sv;
    sv.lang = lang;
    const fig::Figure slide = cost_slide(figures, sv, "footer");
    const auto slide_values = texts_with_role(slide, "value");
    for (size_t r = 0; r < figures.size(); ++r) {
      CHECK(text_at(v.figure, v.layout.cells[r][2]) == figures[r].value);
      CHECK(std::count(slide_values.begin(), slide_values.end(), figures[r].value) == 1);
      CHECK(text_at(v.figure, v.layout.cells[r][0]) == std::string(figure_label(figures[r].quantity, lang)).substr(
                                                          0, text_at(v.figure, v.layout.cells[r][0]).size()));
    }
    CHECK(fig::overlapping_texts(v.figure).empty());
    CHECK(fig::texts_outside(v.figure).empty());
  }
}
