// The runs of one recipe (views/run_group.h) and their spread on the timeline slide:
//   - the shipped seeds are grouped by recipe (induction-d64-h1 with -s2 and -s3, not with the
//     6k runs or with induction), found from the folders
//   - min / median / max per logged step are the values a plain loop over the train_log.jsonl
//     files gives (read here with nlohmann, not through the app's reader), for every shipped
//     group
//   - runs whose logs do not line up are refused with a message naming both
//   - the baselines are ln 64 and 1/64 for V = 65, and the slide draws the band, the median
//     and the uniform-guess line where those values say
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "train_log_lines.h"
#include "views/model_slides.h"
#include "views/run_group.h"
#include "engine/error.h"
#include "model/experiments/baselines.h"
#include "model/formats/checkpoint.h"

using namespace attnsim;
using namespace attnsim::app;
namespace fs = std::filesystem;

namespace {

std::string shipped(const std::string& name) { return (fs::path(model::shipped_models_dir()) / name).string(); }

bool have(const std::string& name) {
  if (fs::exists(shipped(name) + "/model.json")) return true;
  WARN("no checkpoint " << name << ": run group checks skipped");
  return false;
}

std::vector<std::string> names(const std::vector<std::string>& dirs) {
  std::vector<std::string> out;
  for (const auto& d : dirs) out.push_back(fs::path(d).filename().string());
  return out;
}

// min, median (mean of the middle two for an even count), max the plain way.
std::array<double, 3> plain_spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return {v.front(), n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.back()};
}

Timeline steps_timeline(std::vector<int64_t> steps) {
  Timeline t;
  for (int64_t s : steps) {
    TimelinePoint p;
    p.step = s;
    p.loss = 1;
    t.points.push_back(p);
  }
  return t;
}

}  // namespace

TEST_CASE("a recipe's seeds are the folders that differ only in the seed suffix and the seeds") {
  CHECK(recipe_name("induction-d64-h1-s2") == "induction-d64-h1");
  CHECK(recipe_name("induction-d64-h1") == "induction-d64-h1");
  CHECK(recipe_name("induction-d64-h8-6k-s13") == "induction-d64-h8-6k");
  CHECK(recipe_name("induction-s") == "induction-s");
  CHECK(recipe_name("s2") == "s2");
  if (!have("induction-d64-h1") || !have("induction-d64-h8-6k-s2") || !have("induction")) return;
  CHECK(names(recipe_runs(shipped("induction-d64-h1-s3"))) ==
        std::vector<std::string>{"induction-d64-h1", "induction-d64-h1-s2", "induction-d64-h1-s3"});
  CHECK(names(recipe_runs(shipped("induction-d64-h8-6k-s2"))) ==
        std::vector<std::string>{"induction-d64-h8-6k-s1", "induction-d64-h8-6k-s2", "induction-d64-h8-6k-s3"});
  CHECK(names(recipe_runs(shipped("induction"))) == std::vector<std::string>{"induction"});
  const RunGroup g = read_run_group(shipped("induction-d64-h8-6k-s2"));
  CHECK(g.name == "induction-d64-h8-6k");
  CHECK(g.open == 1);
  CHECK(g.seeds == std::vector<uint64_t>{1, 2, 3});
  CHECK(g.spread.size() == 121);
  CHECK_FALSE(read_run_group(shipped("induction")).several());
  CHECK(read_run_group(shipped("induction")).spread.empty());
}

TEST_CASE("the spread per step is the min, median and max of the seeds' logged values, for every shipped group") {
  std::set<std::vector<std::string>> groups;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(model::shipped_models_dir(), ec))
    if (fs::is_regular_file(e.path() / "model.json")) {
      const auto runs = recipe_runs(e.path().string());
      if (runs.size() > 1) groups.insert(runs);
    }
  if (groups.empty()) {
    WARN("no shipped recipe with several seeds: spread checks skipped");
    return;
  }
  CHECK(groups.size() >= 4);  // h1 and h8 at 2,500 and at 6,000 steps (more as they are trained)
  for (const auto& runs : groups) {
    INFO(runs.front());
    const RunGroup g = read_run_group(runs.front());
    std::vector<std::vector<nlohmann::json>> logs;
    for (const auto& r : runs) logs.push_back(test::train_log_lines(r));
    REQUIRE(g.spread.size() == logs[0].size());
    for (size_t i : {size_t{0}, logs[0].size() / 3, logs[0].size() / 2, logs[0].size() - 1}) {
      INFO("line " << i + 1);
      std::vector<double> loss, repeat, induction;
      for (const auto& log : logs) {
        loss.push_back(log[i]["loss"].get<double>());
        if (log[i].contains("loss_repeat")) repeat.push_back(log[i]["loss_repeat"].get<double>());
        if (log[i].contains("scores")) {
          double best = 0;
          for (const auto& row : log[i]["scores"]["induction"])
            for (const auto& v : row) best = std::max(best, v.get<double>());
          induction.push_back(best);
        }
      }
      const SpreadPoint& sp = g.spread[i];
      CHECK(sp.step == logs[0][i]["step"].get<int64_t>());
      const auto l = plain_spread(loss);
      CHECK(sp.loss.min == l[0]);
      CHECK(sp.loss.median == l[1]);
      CHECK(sp.loss.max == l[2]);
      // The induction task logs its repeat loss; recall and gist runs log their own parts.
      if (repeat.size() == logs.size()) {
        const auto r = plain_spread(repeat);
        REQUIRE(sp.loss_repeat);
        CHECK(sp.loss_repeat->min == r[0]);
        CHECK(sp.loss_repeat->median == r[1]);
        CHECK(sp.loss_repeat->max == r[2]);
      } else {
        CHECK(repeat.empty());
        CHECK_FALSE(sp.loss_repeat);
      }
      CHECK(sp.loss.min <= sp.loss.median);
      if (induction.size() == logs.size()) {
        REQUIRE(sp.best_induction);
        const auto b = plain_spread(induction);
        CHECK(sp.best_induction->min == b[0]);
        CHECK(sp.best_induction->median == b[1]);
        CHECK(sp.best_induction->max == b[2]);
      } else {
        CHECK_FALSE(sp.best_induction);
      }
    }
  }
}

TEST_CASE("runs whose logs do not line up step for step are refused, naming both and the first difference") {
  const std::vector<std::string> n = {"run-s1", "run-s2"};
  CHECK(run_spread({steps_timeline({1, 50, 100}), steps_timeline({1, 50, 100})}, n).size() == 3);
  CHECK_THROWS_WITH(run_spread({steps_timeline({1, 50, 100}), steps_timeline({1, 60, 100})}, n),
                    "runs run-s1 and run-s2 do not log the same steps (3 and 3 lines; line 2: step 50 and step 60), "
                    "so there is no spread per step over them");
  CHECK_THROWS_WITH(run_spread({steps_timeline({1, 50, 100}), steps_timeline({1, 50})}, n),
                    Catch::Contains("3 and 2 lines; line 3: step 100 and no line"));
  CHECK_THROWS_AS(spread_of({}), Error);
  const Spread even = spread_of({4, 1, 3, 2});
  CHECK(even.min == 1);
  CHECK(even.median == 2.5);
  CHECK(even.max == 4);
}

TEST_CASE("the baselines: a uniform guess over the 64 tokens that can be targets (V = 65, BOS never one)") {
  model::ModelConfig c;
  c.vocab = 65;
  CHECK(model::vocab_targets(c) == 64);
  CHECK(model::chance_accuracy(c) == 1.0 / 64);
  CHECK(model::uniform_loss(c) == std::log(64.0));
  CHECK(model::uniform_loss(c) == Approx(4.158883).margin(1e-6));
  CHECK(model::run_learned(0.5));
  CHECK_FALSE(model::run_learned(0.4999));
}

TEST_CASE("the timeline slide of a seed draws the spread's band, median and each seed, and the uniform-guess line") {
  if (!have("induction-d64-h8-6k-s1") || !have("induction")) return;
  const TimelineSlide s = timeline_slide(shipped("induction-d64-h8-6k-s1"), 6000, {});
  REQUIRE(s.group.several());
  REQUIRE(s.learned);
  CHECK(s.learned->runs == 3);
  const figure::PlotLayout& loss = s.plots[0];
  REQUIRE(loss.band_items.size() == 2);  // first copy, repeated part
  REQUIRE(loss.series_lines.size() == 5);  // first median, two other seeds, the open run, repeat median
  const auto& band = std::get<figure::Band>(s.figure.items[loss.band_items[1]]);
  REQUIRE(band.x.size() == s.group.spread.size());
  for (size_t i : {size_t{0}, size_t{60}, band.x.size() - 1}) {
    const SpreadPoint& sp = s.group.spread[i];
    CHECK(band.x[i] == Approx(loss.x_at(static_cast<double>(sp.step))));
    CHECK(band.lo[i] == Approx(loss.y_at(sp.loss_repeat->min)));
    CHECK(band.hi[i] == Approx(loss.y_at(sp.loss_repeat->max)));
    // the median: the last series, segment i starts at step i
    if (i + 1 < band.x.size()) {
      const auto& seg = std::get<figure::Line>(s.figure.items[loss.series_lines[4].first + i]);
      CHECK(seg.y1 == Approx(loss.y_at(sp.loss_repeat->median)));
    }
  }
  // The open run (seed 1) is drawn in the text colour, after the other seeds.
  const auto& open = std::get<figure::Line>(s.figure.items[loss.series_lines[3].first]);
  CHECK(open.color == figure::print_theme().text);
  CHECK(open.y1 == Approx(loss.y_at(s.group.timelines[0].points[0].loss_repeat)));
  REQUIRE(loss.level_lines.size() == 1);
  const auto& level = std::get<figure::Line>(s.figure.items[loss.level_lines[0]]);
  CHECK(level.dashed);
  CHECK(level.y1 == Approx(loss.y_at(std::log(64.0))));
  CHECK(level.y2 == level.y1);
  // Its label says the value: over the line, or in the legend of a plot too short for it.
  bool labelled = false;
  for (const auto& item : s.figure.items)
    if (const auto* t = std::get_if<figure::Text>(&item)) labelled |= t->text == "uniform guess: ln 64 = 4.16";
  CHECK(labelled);
  const figure::PlotLayout& induction = s.plots[1];
  REQUIRE(induction.band_items.size() == 1);
  const auto& ib = std::get<figure::Band>(s.figure.items[induction.band_items[0]]);
  CHECK(ib.x.size() == 25);  // the scored lines: every 250 steps and step 1
  CHECK(figure::overlapping_texts(s.figure).empty());
  CHECK(figure::texts_outside(s.figure).empty());

  // In Korean, the same line and count (trf_in: the Korean pattern with the same values).
  ModelSlideText ko;
  ko.lang = lessons::Lang::Ko;
  const TimelineSlide k = timeline_slide(shipped("induction-d64-h8-6k-s1"), 6000, ko);
  bool ko_level = false, ko_count = false;
  for (const auto& item : k.figure.items)
    if (const auto* t = std::get_if<figure::Text>(&item)) {
      ko_level |= t->text == "균등 추측: ln 64 = 4.16";
      ko_count |= t->text.find("시드가 학습됨 (전체 3개, 반복 구간 정확도 50% 이상)") != std::string::npos;
    }
  CHECK(ko_level);
  CHECK(ko_count);
  CHECK(figure::overlapping_texts(k.figure).empty());

  // A single run: its own curves and the line, no band.
  const TimelineSlide one = timeline_slide(shipped("induction"), -1, {});
  CHECK_FALSE(one.group.several());
  CHECK_FALSE(one.learned);
  CHECK(one.plots[0].band_items.empty());
  CHECK(one.plots[0].series_lines.size() == 2);
  REQUIRE(one.plots[0].level_lines.size() == 1);
  CHECK(std::get<figure::Line>(one.figure.items[one.plots[0].level_lines[0]]).y1 ==
        Approx(one.plots[0].y_at(std::log(64.0))));
  CHECK(figure::overlapping_texts(one.figure).empty());
}
