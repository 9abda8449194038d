// The runs of one recipe and their spread. See run_group.h.
#include "views/run_group.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "engine/error.h"
#include "model/experiments/baselines.h"
#include "model/formats/checkpoint.h"

namespace attnsim::app {

namespace fs = std::filesystem;

Spread spread_of(std::vector<double> v) {
  if (v.empty()) throw Error("a spread needs at least one run");
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return {v.front(), n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v.back()};
}

std::vector<SpreadPoint> run_spread(const std::vector<Timeline>& runs, const std::vector<std::string>& names) {
  if (runs.empty()) return {};
  const std::vector<TimelinePoint>& grid = runs[0].points;
  for (size_t r = 1; r < runs.size(); ++r) {
    const std::vector<TimelinePoint>& p = runs[r].points;
    const size_t n = std::min(p.size(), grid.size());
    size_t i = 0;
    while (i < n && p[i].step == grid[i].step) ++i;
    if (i == n && p.size() == grid.size()) continue;
    auto at = [&](const std::vector<TimelinePoint>& pts) {
      return i < pts.size() ? "step " + std::to_string(pts[i].step) : std::string("no line");
    };
    throw Error("runs " + names[0] + " and " + names[r] + " do not log the same steps (" +
                std::to_string(grid.size()) + " and " + std::to_string(p.size()) + " lines; line " +
                std::to_string(i + 1) + ": " + at(grid) + " and " + at(p) +
                "), so there is no spread per step over them");
  }
  std::vector<SpreadPoint> out(grid.size());
  for (size_t i = 0; i < grid.size(); ++i) {
    std::vector<double> loss, first, repeat, induction;
    for (const Timeline& t : runs) {
      const TimelinePoint& q = t.points[i];
      loss.push_back(q.loss);
      if (q.loss_first >= 0) first.push_back(q.loss_first);
      if (q.loss_repeat >= 0) repeat.push_back(q.loss_repeat);
      if (q.scored) induction.push_back(best_induction(q.scores));
    }
    SpreadPoint& s = out[i];
    s.step = grid[i].step;
    s.loss = spread_of(loss);
    if (first.size() == runs.size()) s.loss_first = spread_of(first);
    if (repeat.size() == runs.size()) s.loss_repeat = spread_of(repeat);
    if (induction.size() == runs.size()) s.best_induction = spread_of(induction);
  }
  return out;
}

std::string recipe_name(const std::string& name) {
  size_t i = name.size();
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  if (i < name.size() && i >= 2 && name[i - 1] == 's' && name[i - 2] == '-') return name.substr(0, i - 2);
  return name;
}

namespace {

// model.json less what a seed changes: the config (normalised: an absent kv_heads is heads)
// without "seed", the train recipe without "data_seed".
nlohmann::json recipe_of(const model::CheckpointHeader& h) {
  nlohmann::json r = {{"config", model::config_to_json(h.config)}, {"train", h.meta.value("train", nlohmann::json())}};
  r["config"].erase("seed");
  if (r["train"].is_object()) r["train"].erase("data_seed");
  return r;
}

uint64_t data_seed(const model::CheckpointHeader& h) {
  const nlohmann::json t = h.meta.value("train", nlohmann::json());
  return t.is_object() && t.contains("data_seed") && t["data_seed"].is_number_unsigned() ? t["data_seed"].get<uint64_t>()
                                                                                         : 0;
}

}  // namespace

std::vector<std::string> recipe_runs(const std::string& run_dir) {
  const fs::path open = fs::path(run_dir).lexically_normal();
  const fs::path dir = open.has_filename() ? open : open.parent_path();
  const std::string name = recipe_name(dir.filename().string());
  const model::CheckpointHeader own = model::read_checkpoint_header(dir.string());
  const nlohmann::json recipe = recipe_of(own);
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> found;  // seed, data seed, folder
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir.parent_path().empty() ? fs::path(".") : dir.parent_path(), ec)) {
    const fs::path p = e.path();
    if (p.filename() == dir.filename() || recipe_name(p.filename().string()) != name ||
        !fs::is_regular_file(p / "model.json", ec))
      continue;
    const model::CheckpointHeader h = model::read_checkpoint_header(p.string());
    if (recipe_of(h) == recipe) found.emplace_back(h.config.seed, data_seed(h), p.string());
  }
  found.emplace_back(own.config.seed, data_seed(own), dir.string());
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (const auto& f : found) out.push_back(std::get<2>(f));
  return out;
}

RunGroup read_run_group(const std::string& run_dir) {
  RunGroup g;
  const fs::path open = fs::path(run_dir).lexically_normal();
  const fs::path dir = open.has_filename() ? open : open.parent_path();
  g.name = recipe_name(dir.filename().string());
  g.runs = recipe_runs(dir.string());
  std::vector<std::string> names;
  for (size_t i = 0; i < g.runs.size(); ++i) {
    const model::CheckpointHeader h = model::read_checkpoint_header(g.runs[i]);
    if (fs::path(g.runs[i]).filename() == dir.filename()) {
      g.open = i;
      g.config = h.config;
    }
    g.seeds.push_back(h.config.seed);
    g.timelines.push_back(read_train_log((fs::path(g.runs[i]) / "train_log.jsonl").string()));
    names.push_back(fs::path(g.runs[i]).filename().string());
  }
  if (g.several()) g.spread = run_spread(g.timelines, names);
  return g;
}

LearnedCount count_learned(const RunGroup& g) {
  LearnedCount c;
  for (const std::string& run : g.runs) {
    c.learned += model::run_learned(model::repeat_accuracy(model::load_checkpoint(run))) ? 1 : 0;
    ++c.runs;
  }
  return c;
}

}  // namespace attnsim::app
