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
//     exactly the cells not written yet blank; it colours a step with the tensor view's map
//   - bug lab: the panel's triptych is the buglab slide's (values, maps, scales, names), its
//     difference is the engine's bug - correct cell by cell
//   - one colour map: the GL shader's stops are figure::colormap's; panels take the theme of
//     the UI's background
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <variant>

#include "views/buglab_view.h"
#include "views/cost_slides.h"
#include "views/flash_slides.h"
#include "views/flash_view.h"
#include "views/lesson_figures.h"
#include "views/memory_slides.h"
#include "views/session.h"
#include "views/slide_scenes.h"
#include "engine/flash.h"
#include "engine/mha.h"
#include "engine/scenario.h"
#include "figure/memory_figure.h"
#include "figure/palette.h"
#include "figure/slide.h"
#include "figure/tensor_figure.h"

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

TEST_CASE("a Figures table too wide for its panel is laid out wider (the panel scales it), never squeezing the names") {
  // lesson 10's GQA step at a 1366-pixel window: the sizes and values left the names no room,
  // and the rows were drawn over each other
  const std::vector<StepFigure> figures = {
      {"cost.kv_cache_bytes", "d=4096 h=32 g=32 L=32 B=1 T=4096 fp16", "2,147,483,648 B (2.00 GiB, 2.15 GB)"},
      {"cost.kv_cache_bytes", "d=4096 h=32 g=8 L=32 B=1 T=4096 fp16", "536,870,912 B (512.00 MiB, 536.87 MB)"},
      {"cost.kv_cache_bytes", "d=4096 h=32 g=4 L=32 B=1 T=4096 fp16", "268,435,456 B (256.00 MiB, 268.44 MB)"}};
  for (lessons::Lang lang : {lessons::Lang::En, lessons::Lang::Ko})
    for (float width : {600.0f, 1700.0f, 4000.0f}) {
      INFO(width);
      const CostView v = cost_view(figures, lang, "projector", width);
      REQUIRE(v.layout.rows_shown == figures.size());
      CHECK(v.figure.width >= width);
      CHECK(v.figure.width - 24 >= v.layout.fits_width);
      if (width == 4000.0f) CHECK(v.figure.width == width);  // wide enough: as asked
      for (size_t r = 0; r < figures.size(); ++r) {
        CHECK_FALSE(text_at(v.figure, v.layout.cells[r][0]).empty());
        CHECK(text_at(v.figure, v.layout.cells[r][2]) == figures[r].value);
      }
      CHECK(fig::overlapping_texts(v.figure).empty());
      CHECK(fig::texts_outside(v.figure).empty());
    }
}

// [SECTION] one colour map, one panel theme

TEST_CASE("the GL shader's colour stops are figure::colormap's, and the shader has no colours of its own") {
  for (fig::ColorMapId map : {fig::ColorMapId::Viridis, fig::ColorMapId::Cividis, fig::ColorMapId::Diverging,
                              fig::ColorMapId::Mask}) {
    INFO(fig::colormap_name(map));
    const auto stops = fig::colormap_stops(map);  // what heatmap_gl.cpp uploads as u_stops
    for (int i = 0; i < fig::kColormapStops; ++i) {
      const fig::Color want = fig::colormap(map, static_cast<float>(i) / (fig::kColormapStops - 1));
      CHECK(stops[static_cast<size_t>(i)].r == Approx(want.r).margin(1e-6));
      CHECK(stops[static_cast<size_t>(i)].g == Approx(want.g).margin(1e-6));
      CHECK(stops[static_cast<size_t>(i)].b == Approx(want.b).margin(1e-6));
    }
  }
  // between stops the figure interpolates linearly, as the shader's ramp() does
  const auto v = fig::colormap_stops(fig::ColorMapId::Diverging);
  const fig::Color mid = fig::colormap(fig::ColorMapId::Diverging, 0.25f);  // halfway from stop 2 to 3
  CHECK(mid.r == Approx((v[2].r + v[3].r) / 2).margin(1e-5));
  CHECK(mid.b == Approx((v[2].b + v[3].b) / 2).margin(1e-5));
  // PuOr, not the old red-blue: the diverging map's negative end is purple (#2d004b)
  CHECK(v[0].r == Approx(0x2d / 255.0f));
  CHECK(v[0].b == Approx(0x4b / 255.0f));
  // the shader takes its colours from the uniform: no colour constant, the stop count agrees
  std::ifstream in(std::string(ATTNSIM_SOURCE_DIR) + "/shaders/colourize.frag");
  REQUIRE(in.good());
  const std::string src((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(src.find("uniform vec3 u_stops[" + std::to_string(fig::kColormapStops) + "]") != std::string::npos);
  const std::string body = src.substr(src.find("vec3 ramp"));
  CHECK(body.find("vec3(0.") == std::string::npos);
  // the scale ends the shader gets (heatmap_gl.cpp) are the figures' (set_common_range)
  CHECK(fig::colormap_ends(fig::ColorMapId::Diverging, -0.5f, 2.0f) == std::array<float, 2>{-2.0f, 2.0f});
  CHECK(fig::colormap_ends(fig::ColorMapId::Viridis, 0.1f, 0.8f) == std::array<float, 2>{0.0f, 0.8f});
  CHECK(fig::colormap_ends(fig::ColorMapId::Mask, 0.0f, 0.0f) == std::array<float, 2>{0.0f, 1.0f});
}

TEST_CASE("the memory figure colours a step the way the tensor view does: alpha on viridis, q_heads on PuOr") {
  Session s;
  struct Case {
    const char* scenario;
    const char* step;
    fig::ColorMapId map;
  };
  for (const Case& c : {Case{"default", "alpha", fig::ColorMapId::Viridis},
                        Case{"default", "q_heads", fig::ColorMapId::Diverging},
                        Case{"mask-two-fills", "mask", fig::ColorMapId::Mask}}) {
    INFO(c.scenario << " " << c.step);
    const auto d = run_of(s, c.scenario);
    const Step& step = d->run.trace.at(c.step);
    REQUIRE(fig::map_for_step(c.step) == c.map);  // the tensor view's rule (display.cpp)
    MemoryViewSpec spec;
    spec.run = d.get();
    spec.step = &step;
    const MemoryView v = memory_view(spec);
    const fig::Heatmap* h = heatmap_at(v.figure, v.layout.strips.back());
    REQUIRE(h);
    CHECK(h->map == c.map);
    float hi = 0;
    for (float x : fig::strip_cells(step.out, 0).values)
      if (std::isfinite(x)) hi = std::max(hi, std::fabs(x));
    if (c.map == fig::ColorMapId::Viridis) {
      CHECK(h->lo == 0);  // weights: 0 is the floor, never the middle of a diverging map
      CHECK(h->hi == Approx(hi));
    } else if (c.map == fig::ColorMapId::Diverging) {
      CHECK(h->lo == Approx(-hi));
      CHECK(h->hi == Approx(hi));
    }
    // the slide's legend names the same map
    SlideView sv;
    sv.step = c.step;
    sv.panel = "memory";
    const auto labels = texts_with_role(memory_slide(s.scenario(), *d, sv), "legend");
    CHECK(joined(labels).find(fig::colormap_name(c.map)) != std::string::npos);
  }
}

TEST_CASE("figures in working panels take the theme that suits the UI's background") {
  CHECK(fig::theme_on(fig::rgb(0x0f0f0f)).name == "projector");  // ImGui's dark style (WindowBg 0.06)
  CHECK(fig::theme_on(fig::rgb(0xf0f0f0)).name == "print");      // ImGui's light style (WindowBg 0.94)
  CHECK(fig::theme_on(fig::projector_theme().background).name == "projector");
  CHECK(fig::theme_on(fig::print_theme().background).name == "print");
}

// [SECTION] bug lab

TEST_CASE("the bug lab panel draws the buglab slide's triptych, and its difference is the engine's") {
  Session s;
  const auto d = run_of(s, "mask-inverted");
  auto heatmaps = [](const fig::Figure& f) {
    std::vector<const fig::Heatmap*> out;
    for (const fig::Item& i : f.items)
      if (const auto* h = std::get_if<fig::Heatmap>(&i); h && h->rows > 1) out.push_back(h);  // not the legend bar
    return out;
  };
  auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
  for (const char* name : {"alpha", "scores_masked"})
    for (int64_t head : {0, 2})
      for (lessons::Lang lang : {lessons::Lang::En, lessons::Lang::Ko}) {
        INFO(name << " head " << head << (lang == lessons::Lang::Ko ? " ko" : " en"));
        BuglabViewSpec spec;
        spec.run = d.get();
        spec.step = name;
        spec.head = head;
        spec.width = 1400;
        spec.height = 520;
        spec.lang = lang;
        const BuglabView v = buglab_view(spec);
        REQUIRE(v.blocks.size() == 3);
        REQUIRE(v.layout.cells.size() == 3);
        SlideView sv;
        sv.step = name;
        sv.batch = 0;
        sv.head = head;
        sv.panel = "buglab";
        sv.lang = lang;
        const fig::Figure slide = step_slide(s.scenario(), *d, sv);
        const auto panel_maps = heatmaps(v.figure), slide_maps = heatmaps(slide);
        REQUIRE(panel_maps.size() == 3);
        REQUIRE(slide_maps.size() == 3);
        for (size_t k = 0; k < 3; ++k) {
          CHECK(panel_maps[k]->map == slide_maps[k]->map);
          CHECK(panel_maps[k]->lo == slide_maps[k]->lo);
          CHECK(panel_maps[k]->hi == slide_maps[k]->hi);
          REQUIRE(panel_maps[k]->values.size() == slide_maps[k]->values.size());
          for (size_t i = 0; i < panel_maps[k]->values.size(); ++i)
            CHECK(same(panel_maps[k]->values[i], slide_maps[k]->values[i]));
          // the block's name is in both figures
          const std::string want = v.blocks[k].name;
          auto has = [&](const fig::Figure& f) {
            for (const fig::Item& i : f.items)
              if (const auto* t = std::get_if<fig::Text>(&i); t && t->text == want) return true;
            return false;
          };
          CHECK(has(v.figure));
          CHECK(has(slide));
        }
        CHECK(panel_maps[2]->map == fig::ColorMapId::Diverging);
        CHECK(panel_maps[0]->map == fig::map_for_step(name));
        // the engine's tensors, cell by cell: correct, with the bug, the difference
        const Tensor& bug = d->run.trace.at(name).out;
        const Tensor& ok = d->reference.trace.at(name).out;
        const int64_t tq = bug.size(2), tk = bug.size(3);
        int64_t differing = 0;
        for (int64_t i = 0; i < tq; ++i)
          for (int64_t j = 0; j < tk; ++j) {
            const size_t c = static_cast<size_t>(i * tk + j);
            const float a = ok.at({0, head, i, j}), b = bug.at({0, head, i, j});
            CHECK(same(v.blocks[0].values[c], a));
            CHECK(same(v.blocks[1].values[c], b));
            const float diff = v.blocks[2].values[c];
            if (same(a, b)) CHECK(diff == 0.0f);  // -inf and -inf too: not NaN
            else if (std::isnan(a) || std::isnan(b)) CHECK(std::isnan(diff));
            else if (std::isinf(a) || std::isinf(b)) CHECK(diff == b);
            else CHECK(diff == b - a);
            differing += !same(a, b);
          }
        CHECK(v.differing == differing);
        CHECK(differing > 0);  // mask-inverted: the bug shows at both steps
        CHECK(fig::overlapping_texts(v.figure).empty());
        CHECK(fig::texts_outside(v.figure).empty());
      }
  // a step before the bug: nothing differs
  BuglabViewSpec spec;
  spec.run = d.get();
  spec.step = "q_heads";
  CHECK(buglab_view(spec).differing == 0);
  CHECK(buglab_view(spec).blocks.size() == 3);
}

TEST_CASE("a (T, d) step whose columns are the heads' slices brackets them on the slide; out only when W_O = I") {
  Session s;
  const auto d = run_of(s, "default");
  const Trace& trace = d->run.trace;
  for (const char* name : {"q_proj", "k_proj", "v_proj", "ctx_concat"}) {
    INFO(name);
    CHECK(columns_are_heads(*d, trace.at(name)));
    const auto labels = step_axis_labels(*d, name, trace.at(name).out, 0, lessons::Lang::Ko);
    CHECK(labels.col_groups == std::vector<std::string>{"헤드 0", "헤드 1", "헤드 2", "헤드 3"});
  }
  CHECK_FALSE(columns_are_heads(*d, trace.at("query")));  // the input: not split yet
  CHECK_FALSE(columns_are_heads(*d, trace.at("out")));    // W_O mixes every head into every column
  RunData identity = *d;
  identity.config.wo_identity = true;
  CHECK(columns_are_heads(identity, trace.at("out")));
  // The slide of q_proj: the four names over their brackets, every label apart.
  SlideView sv;
  sv.step = "q_proj";
  const fig::Figure f = step_slide(s.scenario(), *d, sv);
  const auto labels = texts_with_role(f, "label");
  for (int h = 0; h < 4; ++h) CHECK(std::count(labels.begin(), labels.end(), "head " + std::to_string(h)) == 1);
  CHECK(fig::overlapping_texts(f).empty());
}

TEST_CASE("every engine figure a lesson shows has a reader's name in ko and en, not its code name") {
  std::vector<lessons::Diagnostic> problems;
  const auto all = lessons::load_lesson_dir(std::string(ATTNSIM_SOURCE_DIR) + "/lessons", &problems);
  REQUIRE(all.size() >= 15);
  size_t figures = 0;
  for (const auto& lesson : all)
    for (const auto& step : lesson.steps)
      for (const auto& claim : step.claims) {
        if (!is_figure_quantity(claim.quantity)) continue;
        INFO(lesson.id << ": " << claim.quantity);
        ++figures;
        CHECK(std::string(figure_label(claim.quantity, lessons::Lang::En)) != claim.quantity);
        CHECK(std::string(figure_label(claim.quantity, lessons::Lang::Ko)) != claim.quantity);
      }
  CHECK(figures >= 40);  // the lessons show about fifty
}

TEST_CASE("every computed step of every scenario draws its tensor on its slide, never a blank page") {
  const float band_top = fig::kSlideHeight - fig::kMargin - 150;  // the caption and legend band
  size_t slides = 0;
  for (const Scenario& sc : all_scenarios()) {
    INFO(sc.name);
    const auto run = compute_run(sc);
    for (const Step& step : run->run.trace.steps) {
      if (step.skipped() || !step.out.defined()) continue;
      INFO(step.name);
      SlideView sv;
      sv.step = step.name;
      const fig::Figure f = step_slide(sc, *run, sv);
      size_t data = 0;
      for (const fig::Item& i : f.items)
        if (const auto* h = std::get_if<fig::Heatmap>(&i); h && h->rect.y < band_top) ++data;
      CHECK(data >= 1);
      ++slides;
    }
  }
  CHECK(slides > 200);
}
