// Slides of the trained model (model_slides.h) on the shipped run (assets/models/induction):
//   - the timeline slide's curves are the run log's values (read here from train_log.jsonl
//     with nlohmann, not through the app's reader) and its phase-change marker sits at the
//     logged step where the best induction score jumps
//   - the ablation slide crosses out exactly the knocked-out heads and its bars are the
//     loss and accuracy that lesson 11's model.* claims compute
//   - lesson 11 and 14 decks use these slides
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "train_log_lines.h"
#include "views/model_slides.h"
#include "views/slide_scenes.h"
#include "engine/error.h"
#include "lessons/model_quantity.h"
#include "model/training/tasks.h"

using namespace attnsim;
using namespace attnsim::app;
namespace fs = std::filesystem;

namespace {

bool have_model() {
  if (fs::exists(default_model_dir() + "/model.json")) return true;
  WARN("no checkpoint at " << default_model_dir() << ": model slide checks skipped");
  return false;
}

// A drawn segment's start, mapped back through the plot's axes.
std::pair<double, double> value_at(const figure::PlotLayout& L, const figure::Line& ln) {
  return {L.x_lo + (ln.x1 - L.axes.x) / L.axes.w * (L.x_hi - L.x_lo),
          L.y_lo + (L.axes.bottom() - ln.y1) / L.axes.h * (L.y_hi - L.y_lo)};
}

}  // namespace

TEST_CASE("the timeline slide plots the run log's values and marks the phase change where induction jumps") {
  if (!have_model()) return;
  const std::string run = default_model_dir();
  const TimelineSlide s = timeline_slide(run + "/checkpoints/step-000750", 750, {});
  const auto log = test::train_log_lines(run);
  REQUIRE(s.plots.size() == 4);

  // Loss per part: series 1 is the repeated part, one point per log line that has it.
  std::vector<std::pair<double, double>> repeat;
  for (const auto& j : log)
    if (j.contains("loss_repeat")) repeat.emplace_back(j["step"].get<double>(), j["loss_repeat"].get<double>());
  const figure::PlotLayout& loss = s.plots[0];
  REQUIRE(loss.series_lines[1].second == repeat.size() - 1);
  for (size_t i = 0; i + 1 < repeat.size(); ++i) {
    const auto v = value_at(loss, std::get<figure::Line>(s.figure.items[loss.series_lines[1].first + i]));
    CHECK(v.first == Approx(repeat[i].first).margin(0.05));
    CHECK(v.second == Approx(repeat[i].second).margin(1e-4));
  }

  // Induction per head: head 1.3 is series 1 * heads + 3, one point per scored line. Find
  // the scored line after which the best head's score rises the most.
  std::vector<std::pair<double, double>> ind13;
  double best_rise = 0, prev_best = -1, jump_step = -1;
  for (const auto& j : log) {
    if (!j.contains("scores")) continue;
    const auto& ind = j["scores"]["induction"];
    ind13.emplace_back(j["step"].get<double>(), ind[1][3].get<double>());
    double best = 0;
    for (const auto& row : ind)
      for (const auto& v : row) best = std::max(best, v.get<double>());
    if (prev_best >= 0 && best - prev_best > best_rise) {
      best_rise = best - prev_best;
      jump_step = j["step"].get<double>();
    }
    prev_best = best;
  }
  const figure::PlotLayout& induction = s.plots[1];
  REQUIRE(induction.series_lines.size() == 8);
  REQUIRE(induction.series_lines[7].second == ind13.size() - 1);
  for (size_t i = 0; i + 1 < ind13.size(); ++i) {
    const auto v = value_at(induction, std::get<figure::Line>(s.figure.items[induction.series_lines[7].first + i]));
    CHECK(v.first == Approx(ind13[i].first).margin(0.05));
    CHECK(v.second == Approx(ind13[i].second).margin(1e-4));
  }
  // The shipped run, scored every 25 steps: the best induction score rises most from 0.12 at
  // step 625 to 0.39 at 650 (it first exceeds one half at 675, lesson 14's
  // model.phase_change_step).
  CHECK(best_rise > 0.25);
  CHECK(jump_step == 650);
  CHECK(s.phase_step == 650);
  for (const figure::PlotLayout& p : s.plots) {
    REQUIRE(p.marker_lines.size() == 2);  // the phase change, this step
    CHECK(std::get<figure::Line>(s.figure.items[p.marker_lines[0]]).x1 == Approx(p.x_at(jump_step)));
    CHECK(std::get<figure::Line>(s.figure.items[p.marker_lines[1]]).x1 == Approx(p.x_at(750)));
  }
  CHECK(figure::overlapping_texts(s.figure).empty());
  CHECK(figure::texts_outside(s.figure).empty());
  CHECK_THROWS_AS(timeline_slide("/nonexistent/run", -1, {}), Error);
}

TEST_CASE("a run that logs no repeated part (recall, gist) plots its whole loss, not empty part lines") {
  Timeline tl;
  tl.layers = 1;
  tl.heads = 2;
  for (int64_t step = 50; step <= 1000; step += 50) {
    TimelinePoint q;
    q.step = step;
    q.loss = 4.5 - 1.5 * static_cast<double>(step) / 1000;  // no loss_first / loss_repeat (-1)
    tl.points.push_back(q);
  }
  figure::Figure f;
  f.width = 900;
  f.height = 1600;
  const auto plots = add_timeline_plots(f, figure::print_theme(), {0, 0, 900, 1600}, tl, 1000, -1, lessons::Lang::En, false);
  const figure::PlotLayout& loss = plots.at(0);
  REQUIRE(loss.series_lines.size() == 1);
  REQUIRE(loss.series_lines[0].second == tl.points.size() - 1);  // one segment between each two points
  for (size_t i = 0; i < loss.series_lines[0].second; ++i) {
    const auto v = value_at(loss, std::get<figure::Line>(f.items[loss.series_lines[0].first + i]));
    CHECK(v.second == Approx(tl.points[i].loss).margin(1e-3));
  }
}

TEST_CASE("the Training tab's plots: one column, a live run's 3000 steps thinned to every k-th point and the last") {
  Timeline tl;
  tl.layers = 1;
  tl.heads = 2;
  for (int64_t step = 1; step <= 3000; ++step) {
    TimelinePoint q;
    q.step = step;
    q.loss_first = 4.0;
    q.loss_repeat = step == 1234 ? 6.5 : 4.0 - 3.5 * static_cast<double>(step) / 3000;  // one spike, between kept points
    tl.points.push_back(q);
  }
  figure::Figure f;
  f.width = 900;
  f.height = 1600;
  const auto plots = add_timeline_plots(f, figure::print_theme(), {0, 0, 900, 1600}, tl, 4000, 2000, lessons::Lang::En, false);
  REQUIRE(plots.size() == 4);
  for (size_t i = 1; i < 4; ++i) {  // stacked: same x, each below the last
    CHECK(plots[i].axes.x == Approx(plots[0].axes.x));
    CHECK(plots[i].axes.y > plots[i - 1].axes.bottom());
  }
  const figure::PlotLayout& loss = plots[0];
  CHECK(loss.x_hi == 4000);   // a live run's planned steps
  CHECK(loss.y_hi == 7);      // the spike sets the range though its point is thinned out
  const size_t segments = loss.series_lines[1].second;
  CHECK(segments <= 401);
  CHECK(segments >= 300);
  for (size_t i = 0; i < segments; ++i) {  // every drawn point is a logged one
    const auto v = value_at(loss, std::get<figure::Line>(f.items[loss.series_lines[1].first + i]));
    const auto step = static_cast<int64_t>(std::lround(v.first));
    CHECK(v.second == Approx(tl.points[static_cast<size_t>(step - 1)].loss_repeat).margin(1e-3));
  }
  const auto end = std::get<figure::Line>(f.items[loss.series_lines[1].first + segments - 1]);
  CHECK(end.x2 == Approx(loss.x_at(3000)));  // the last step is always drawn
  CHECK(figure::overlapping_texts(f).empty());
}

TEST_CASE("the ablation slide crosses out the knocked-out heads and its bars are lesson 11's model figures") {
  if (!have_model()) return;
  ModelView view;
  view.load(default_model_dir());
  const auto induction = view.heads_with_role("induction");
  REQUIRE(induction.size() == 4);
  view.set_ablated(induction);
  ModelSlideText text;
  text.title = "Ablation";
  text.lang = lessons::Lang::Ko;
  const HeadGridSlide s = head_grid_slide(view, text);
  const int64_t heads = view.model().config.heads;
  REQUIRE(s.cells.size() == static_cast<size_t>(view.model().config.layers * heads));
  REQUIRE(s.cross_items.size() == induction.size());
  for (size_t i = 0; i < induction.size(); ++i) {
    // The cross runs corner to corner of that head's cell.
    const figure::Rect& cell = s.cells[static_cast<size_t>(induction[i].layer * heads + induction[i].head)];
    const auto& ln = std::get<figure::Line>(s.figure.items[s.cross_items[i]]);
    CHECK(ln.x1 == Approx(cell.x));
    CHECK(ln.y1 == Approx(cell.y));
    CHECK(ln.x2 == Approx(cell.right()));
    CHECK(ln.y2 == Approx(cell.bottom()));
  }

  // The numbers are the model's on the evaluation batch: what lesson 11's claims compute.
  lessons::ModelSettings intact, cut;
  cut.ablate = "1.0,1.1,1.2,1.3";
  const double acc_base = std::get<double>(lessons::model_field(intact, "repeat_accuracy"));
  const double acc_cut = std::get<double>(lessons::model_field(cut, "repeat_accuracy"));
  const double loss_cut = std::get<double>(lessons::model_field(cut, "repeat_loss"));
  CHECK(s.numbers.trained.parts[model::kRepeat].accuracy() == Approx(acc_base));
  CHECK(s.numbers.ablated.parts[model::kRepeat].accuracy() == Approx(acc_cut));
  CHECK(s.numbers.ablated.parts[model::kRepeat].loss() == Approx(loss_cut));
  CHECK(acc_cut <= acc_base / 2);
  // Bars: accuracy group 1 (repeated part), [as trained, knocked out], heights over the axes.
  auto bar = [&](const figure::BarLayout& L, size_t g, size_t b) {
    return std::get<figure::Box>(s.figure.items[L.bar_boxes[g][b]]).rect.h / L.axes.h * L.y_hi;
  };
  CHECK(bar(s.accuracy, 1, 0) == Approx(acc_base).margin(1e-4));
  CHECK(bar(s.accuracy, 1, 1) == Approx(acc_cut).margin(1e-4));
  CHECK(bar(s.loss, 1, 1) == Approx(loss_cut).margin(1e-4));
  CHECK(std::get<figure::Text>(s.figure.items[s.accuracy.bar_texts[1][1]]).text ==
        [&] {
          char b[32];
          std::snprintf(b, sizeof b, "%.1f %%", 100 * acc_cut);
          return std::string(b);
        }());
  CHECK(figure::overlapping_texts(s.figure).empty());
  CHECK(figure::texts_outside(s.figure).empty());
}

TEST_CASE("lesson decks on the model: the ablation step crosses heads out, the timeline steps plot the log") {
  if (!have_model()) return;
  const std::string dir = std::string(ATTNSIM_SOURCE_DIR) + "/lessons/";
  auto count_crosses = [](const figure::Figure& f) {
    size_t n = 0;
    for (const auto& it : f.items)
      if (const auto* ln = std::get_if<figure::Line>(&it)) n += ln->color == figure::rgb(0xD55E00) && ln->width == 5;
    return n;
  };
  const auto l11 = lessons::load_lesson(dir + "11-heads-up-close.toml");
  REQUIRE(l11.lesson);
  const Deck d11 = lesson_deck(*l11.lesson, lessons::Lang::En, "print");
  for (const DeckPage& p : d11.pages) {
    if (p.name.find("ablation") != std::string::npos) CHECK(count_crosses(p.figure) == 8);  // 4 heads, 2 lines each
    if (p.name.find("real-roles") != std::string::npos) CHECK(count_crosses(p.figure) == 0);
  }
  const auto l14 = lessons::load_lesson(dir + "14-watching-a-head-form.toml");
  REQUIRE(l14.lesson);
  const Deck d14 = lesson_deck(*l14.lesson, lessons::Lang::Ko, "print");
  REQUIRE(d14.pages.size() == 4);
  for (size_t i = 1; i < d14.pages.size(); ++i) {
    size_t lines = 0;
    for (const auto& it : d14.pages[i].figure.items) lines += std::holds_alternative<figure::Line>(it);
    CHECK(lines > 100);  // 2 loss curves + 24 score curves of 12 segments, markers
  }
}

TEST_CASE("a step comparing checkpoints shows each model's grid and one bar per model (lesson 15)") {
  if (!have_model()) return;
  const auto l15 = lessons::load_lesson(std::string(ATTNSIM_SOURCE_DIR) + "/lessons/15-one-head-or-many.toml");
  REQUIRE(l15.lesson);
  const lessons::LessonStep* toy = nullptr;
  for (const auto& st : l15.lesson->steps)
    if (st.id == "toy-result") toy = &st;
  REQUIRE(toy);
  const auto dirs = lessons::step_model_dirs(*toy);
  // induction-d64-h1 and induction-d64-h8, the pair it compares; the 6,000-step run its text
  // names the schedule of (its claims over runs open nothing)
  REQUIRE(dirs.size() == 3);
  CHECK(dirs[2].find("induction-d64-h8-6k-s1") != std::string::npos);
  ModelView one, eight;
  one.load(dirs[0]);
  eight.load(dirs[1]);
  const CompareSlide s = compare_slide({{"h1", &one}, {"h8", &eight}}, {});
  REQUIRE(s.cells.size() == 2);
  CHECK(s.cells[0].size() == 2);   // 2 layers x 1 head
  CHECK(s.cells[1].size() == 16);  // 2 layers x 8 heads
  lessons::ModelSettings m1, m8;
  m1.checkpoint = "induction-d64-h1";
  m8.checkpoint = "induction-d64-h8";
  const double acc1 = std::get<double>(lessons::model_field(m1, "repeat_accuracy"));
  const double acc8 = std::get<double>(lessons::model_field(m8, "repeat_accuracy"));
  CHECK(s.stats[0].parts[model::kRepeat].accuracy() == Approx(acc1));
  CHECK(s.stats[1].parts[model::kRepeat].accuracy() == Approx(acc8));
  CHECK(acc1 > acc8 + 0.5);  // the toy model's answer: one head copies, eight have not started
  auto bar = [&](size_t g, size_t b) {
    return std::get<figure::Box>(s.figure.items[s.accuracy.bar_boxes[g][b]]).rect.h / s.accuracy.axes.h;
  };
  CHECK(bar(1, 0) == Approx(acc1).margin(1e-4));
  CHECK(bar(1, 1) == Approx(acc8).margin(1e-4));
  CHECK(figure::overlapping_texts(s.figure).empty());
  CHECK(figure::texts_outside(s.figure).empty());

  // The lesson deck's page for that step compares its three models: 2 + 16 + 16 head heatmaps
  // (one head, eight heads, eight heads at 6,000 steps).
  const Deck d = lesson_deck(*l15.lesson, lessons::Lang::En, "print");
  for (const DeckPage& p : d.pages)
    if (p.name.find("toy-result") != std::string::npos) {
      size_t maps = 0;
      for (const auto& it : p.figure.items)
        if (const auto* h = std::get_if<figure::Heatmap>(&it)) maps += h->rows > 1;  // not the legend bar
      CHECK(maps == 34);
    }
}

TEST_CASE("the model scenarios export as slides: the head grid with its crosses, then the training curves") {
  if (!have_model()) return;
  auto crosses = [](const figure::Figure& f) {
    size_t n = 0;
    for (const auto& it : f.items)
      if (const auto* ln = std::get_if<figure::Line>(&it)) n += ln->color == figure::rgb(0xD55E00) && ln->width == 5;
    return n;
  };
  // the toy model named (its 8 induction heads); with no folder named, the window's model
  const std::string toy = default_model_dir();
  const Deck cut = scenario_deck("model-ablate-induction", lessons::Lang::Ko, "print", toy);
  REQUIRE(cut.pages.size() == 3);  // title, head grid, training log
  CHECK(crosses(cut.pages[1].figure) == 8);
  size_t lines = 0;
  for (const auto& it : cut.pages[2].figure.items) lines += std::holds_alternative<figure::Line>(it);
  CHECK(lines > 100);
  CHECK(crosses(model_scenario_slide("model", toy, lessons::Lang::En, "print")) == 0);
  CHECK(crosses(model_scenario_slide("model-ablate-induction", toy, lessons::Lang::En, "projector")) == 8);
  // "": the model the window opens (start_model_dir), named in the footer by its run, no path
  const figure::Figure shown = model_scenario_slide("model", "", lessons::Lang::En, "print");
  bool named = false, path = false;
  for (const auto& it : shown.items)
    if (const auto* t = std::get_if<figure::Text>(&it); t && t->role == "footer") {
      named = t->text.find(checkpoint_name(start_model_dir())) != std::string::npos;
      path = t->text.find('/') != std::string::npos;
    }
  CHECK(named);
  CHECK_FALSE(path);
  CHECK_THROWS_AS(model_scenario_slide("model", "/nonexistent/model", lessons::Lang::En, "print"), Error);
}

TEST_CASE("the head grid draws each position's share of ||alpha W_O v|| when asked, and says so in the legend") {
  if (!have_model()) return;
  ModelView v;
  v.load(default_model_dir());
  v.repeated_random(16, 7);
  auto maps = [](const figure::Figure& f) {  // the head cells' heatmaps, in drawing order
    std::vector<const figure::Heatmap*> out;
    for (const auto& it : f.items)
      if (const auto* h = std::get_if<figure::Heatmap>(&it); h && h->rows > 1) out.push_back(h);
    return out;
  };
  auto says = [](const figure::Figure& f, const std::string& what) {
    for (const auto& it : f.items)
      if (const auto* t = std::get_if<figure::Text>(&it); t && t->text.find(what) != std::string::npos) return true;
    return false;
  };
  const uint64_t before = v.revision();
  const HeadGridSlide weight = head_grid_slide(v, {});
  v.set_show_contribution(true);
  CHECK(v.revision() == before + 1);  // the panel's figure cache keys on it
  const HeadGridSlide contrib = head_grid_slide(v, {});
  CHECK(says(weight.figure, "alpha (attention weight)"));
  CHECK(says(contrib.figure, "(contribution)"));
  const auto w = maps(weight.figure), c = maps(contrib.figure);
  const int64_t layers = v.model().config.layers, heads = v.model().config.heads, T = static_cast<int64_t>(v.tokens().size());
  REQUIRE(w.size() == static_cast<size_t>(layers * heads));
  REQUIRE(c.size() == w.size());
  bool differs = false;
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t h = 0; h < heads; ++h) {
      const figure::Heatmap& cell = *c[static_cast<size_t>(l * heads + h)];
      const Tensor& want = v.shown().contributions[static_cast<size_t>(l)];
      REQUIRE(cell.values.size() == static_cast<size_t>(T * T));
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j)
          CHECK(cell.values[static_cast<size_t>(i * T + j)] == Approx(want.at({0, h, i, j})));
      differs |= cell.values != w[static_cast<size_t>(l * heads + h)]->values;
    }
  CHECK(differs);  // a grid of the same alphas would pass the value check if contributions were alpha
}

TEST_CASE("the slides' loss and accuracy bars draw the uniform guess: ln(V-1) and 1/(V-1)") {
  if (!have_model()) return;
  ModelView v;
  v.load(default_model_dir());
  v.repeated_random(16, 7);
  const HeadGridSlide s = head_grid_slide(v, {});
  const model::ModelConfig& c = v.model().config;
  for (const auto& [layout, want] : {std::pair{&s.loss, std::log(static_cast<double>(c.vocab - 1))},
                                     std::pair{&s.accuracy, 1.0 / static_cast<double>(c.vocab - 1)}}) {
    REQUIRE(layout->level_lines.size() == 1);
    const auto& line = std::get<figure::Line>(s.figure.items[layout->level_lines[0]]);
    CHECK(line.dashed);
    CHECK(line.y1 == Approx(layout->y_at(want)));
    CHECK(line.x1 == Approx(layout->axes.x));
    CHECK(line.x2 == Approx(layout->axes.right()));
    CHECK(layout->level_labels[0] == figure::kNoItem);  // its label is in the chart's title
  }
  bool titled = false;
  for (const auto& it : s.figure.items)
    if (const auto* t = std::get_if<figure::Text>(&it); t && t->text.find("uniform guess 1/" + std::to_string(c.vocab - 1)) != std::string::npos)
      titled = true;
  CHECK(titled);
}
