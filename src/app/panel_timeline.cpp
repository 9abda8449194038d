// The model panel's Training tab: train live on a worker thread (Trainer), or read the
// loaded run's train_log.jsonl, and plot
//   - the loss per task part (first copy, repeated part) against the step
//   - each head's role scores (induction, previous-token, first-token) against the step
//   - the phase change: where the largest head's induction score jumps (training.h)
//   - where the scrubbed checkpoint sits
// Plots are ImGui draw-list lines (no plotting dependency).
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <tuple>

#include <unistd.h>

#include "app/app.h"
#include "app/i18n.h"
#include "app/model_view.h"
#include "app/training.h"
#include "engine/error.h"

namespace attnsim::app {

namespace {

struct Series {
  std::vector<ImVec2> points;  // (step, value)
  ImU32 colour;
  std::string label;
};

// The plots' lines in (step, value), built when the timeline grows, not every frame.
struct PlotLines {
  std::string key;  // "run N" for the trainer's run N, else the log's path
  size_t points = 0;
  Lang lang = Lang::En;
  std::vector<Series> loss;          // per part: first copy, repeated part
  float loss_hi = 0;
  std::vector<Series> roles[3];      // induction, previous-token, first-token: one per head
  int64_t phase = -1;                // Timeline::phase_change_step()
};

}  // namespace

struct TimelinePanelState {
  Trainer trainer;
  TrainSettings settings;
  std::string log_path;  // the loaded run's log, read once
  Timeline log;
  Timeline live;              // the trainer's points so far (Trainer::update appends)
  uint64_t live_run = 0;
  bool trained_here = false;  // the plots show the trainer's run, not the log
  std::string refusal;        // why the last Start was refused
  PlotLines lines;
  // The run's newest saved checkpoint, listed once a second, not every frame.
  std::string latest_checkpoint;
  std::chrono::steady_clock::time_point latest_at;
};

namespace {

// Lines over [0, x_max] x [y_lo, y_hi] in a box `size` at the cursor; vertical markers at
// `marks` (x, colour, label).
void plot(const char* title, ImVec2 size, const std::vector<Series>& series, float x_max, float y_lo, float y_hi,
          const std::vector<std::tuple<float, ImU32, std::string>>& marks) {
  ImGui::TextUnformatted(title);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float left = 44, bottom = ImGui::GetTextLineHeight() + 4;
  const ImVec2 a{p.x + left, p.y + 4}, b{p.x + size.x - 8, p.y + size.y - bottom};
  list->AddRectFilled(a, b, IM_COL32(24, 26, 32, 255));
  list->AddRect(a, b, IM_COL32(90, 90, 100, 255));
  auto X = [&](float x) { return a.x + (b.x - a.x) * (x_max > 0 ? x / x_max : 0); };
  auto Y = [&](float y) { return b.y - (b.y - a.y) * std::clamp((y - y_lo) / std::max(y_hi - y_lo, 1e-6f), 0.0f, 1.0f); };
  char buf[32];
  for (int i = 0; i <= 2; ++i) {  // y ticks: low, middle, high
    const float v = y_lo + (y_hi - y_lo) * static_cast<float>(i) / 2;
    std::snprintf(buf, sizeof buf, "%.2g", static_cast<double>(v));
    list->AddText({p.x, Y(v) - ImGui::GetTextLineHeight() / 2}, IM_COL32(170, 170, 180, 255), buf);
    list->AddLine({a.x, Y(v)}, {b.x, Y(v)}, IM_COL32(60, 60, 70, 255));
  }
  const std::string last_step = trf("step %.0f", static_cast<double>(x_max));
  list->AddText({b.x - ImGui::CalcTextSize(last_step.c_str()).x, b.y + 2}, IM_COL32(170, 170, 180, 255),
                last_step.c_str());
  list->AddText({a.x, b.y + 2}, IM_COL32(170, 170, 180, 255), "0");
  list->PushClipRect(a, b, true);
  for (const Series& s : series) {
    std::vector<ImVec2> pts;
    pts.reserve(s.points.size());
    for (const ImVec2& q : s.points) pts.push_back({X(q.x), Y(q.y)});
    if (pts.size() >= 2) list->AddPolyline(pts.data(), static_cast<int>(pts.size()), s.colour, 0, 2.0f);
  }
  for (const auto& [x, colour, label] : marks) {
    list->AddLine({X(x), a.y}, {X(x), b.y}, colour, 2.0f);
    list->AddText({X(x) + 3, a.y + 2}, colour, label.c_str());
  }
  list->PopClipRect();
  // Legend under the plot.
  ImGui::Dummy(size);
  for (size_t i = 0; i < series.size(); ++i) {
    if (series[i].label.empty()) continue;
    if (i) ImGui::SameLine();
    const ImVec2 q = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    list->AddRectFilled({q.x, q.y + h * 0.35f}, {q.x + 12, q.y + h * 0.65f}, series[i].colour);
    ImGui::Dummy({14, h});
    ImGui::SameLine(0, 2);
    ImGui::TextUnformatted(series[i].label.c_str());
  }
}

ImU32 head_line(int64_t l, int64_t h, int64_t heads, float alpha = 1.0f) {
  // Heads of one layer in one hue family, layers apart.
  const float t = static_cast<float>(h) / static_cast<float>(std::max<int64_t>(heads, 1));
  ImVec4 c;
  ImGui::ColorConvertHSVtoRGB(std::fmod(0.08f + 0.5f * static_cast<float>(l) + 0.35f * t, 1.0f), 0.65f, 0.95f, c.x, c.y, c.z);
  return ImGui::GetColorU32({c.x, c.y, c.z, alpha});
}

// The lines of `tl`, rebuilt only when it grew, is another run or log (`key`), or the
// language changed (the legends are translated).
const PlotLines& plot_lines(PlotLines& c, const Timeline& tl, const std::string& key) {
  if (c.key == key && c.points == tl.points.size() && c.lang == ui_lang()) return c;
  c = PlotLines{};
  c.key = key;
  c.points = tl.points.size();
  c.lang = ui_lang();
  c.phase = tl.phase_change_step();
  // Loss per part; a long live run keeps at most ~600 points per line.
  const size_t stride = std::max<size_t>(1, tl.points.size() / 600);
  Series first{{}, IM_COL32(120, 180, 255, 255), tr("loss, first copy")};
  Series repeat{{}, IM_COL32(255, 150, 20, 255), tr("loss, repeated part")};
  for (size_t i = 0; i < tl.points.size(); i += stride) {
    const TimelinePoint& p = tl.points[i];
    if (p.loss_first >= 0) first.points.push_back({static_cast<float>(p.step), static_cast<float>(p.loss_first)});
    if (p.loss_repeat >= 0) repeat.points.push_back({static_cast<float>(p.step), static_cast<float>(p.loss_repeat)});
    c.loss_hi = std::max({c.loss_hi, static_cast<float>(p.loss_first), static_cast<float>(p.loss_repeat)});
  }
  c.loss = {std::move(first), std::move(repeat)};
  // Role scores per head (the scored points only).
  double model::HeadScores::*fields[3] = {&model::HeadScores::induction, &model::HeadScores::previous,
                                          &model::HeadScores::first};
  for (int r = 0; r < 3; ++r)
    for (int64_t l = 0; l < tl.layers; ++l)
      for (int64_t h = 0; h < tl.heads; ++h) {
        Series sr{{}, head_line(l, h, tl.heads), r == 0 ? std::to_string(l) + "." + std::to_string(h) : ""};
        for (const TimelinePoint& p : tl.points)
          if (p.scored && p.scores.layers == tl.layers && p.scores.heads == tl.heads)
            sr.points.push_back({static_cast<float>(p.step), static_cast<float>(p.scores.at(l, h).*fields[r])});
        c.roles[r].push_back(std::move(sr));
      }
  return c;
}

void controls(App& app, TimelinePanelState& s) {
  TrainSettings& t = s.settings;
  const bool running = s.trainer.running();
  ImGui::BeginDisabled(running);
  int v[4] = {static_cast<int>(t.layers), static_cast<int>(t.heads), static_cast<int>(t.d_model), static_cast<int>(t.steps)};
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.6f);
  if (ImGui::InputInt4(tr("layers heads d_model steps"), v)) {
    t.layers = std::clamp(v[0], 1, 8);
    t.heads = std::clamp(v[1], 1, 16);
    t.d_model = std::clamp(v[2], 4, 512);
    t.steps = std::clamp(v[3], 1, 1000000);
    t.checkpoint_every = std::max<int64_t>(1, t.steps / 6);
  }
  float lr = static_cast<float>(t.lr);
  int seed = static_cast<int>(t.seed);
  ImGui::SetNextItemWidth(120);
  if (ImGui::InputFloat(tr("lr"), &lr, 0, 0, "%.4g")) t.lr = std::clamp(lr, 1e-6f, 1.0f);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(100);
  if (ImGui::InputInt(tr("seed"), &seed)) t.seed = static_cast<uint64_t>(std::max(seed, 0));
  ImGui::EndDisabled();
  ImGui::TextDisabled("%s", trf("about %.0f s here; checkpoints every %lld steps", estimate_seconds(t),
                                static_cast<long long>(t.checkpoint_every)).c_str());
  if (!running && ImGui::Button(tr("Start"))) start_model_training(app);
  if (running && ImGui::Button(tr("Stop"))) s.trainer.stop();
  ImGui::SameLine();
  if (ImGui::Button(tr("Reset"))) {
    s.trainer.stop();
    s.trained_here = false;
    s.settings = {};
    s.refusal.clear();
  }
  // Open the run's saved checkpoints: the scrubber above then moves through them.
  if (s.trained_here) {
    const auto now = std::chrono::steady_clock::now();
    if (now - s.latest_at >= std::chrono::seconds(1)) {
      s.latest_at = now;
      s.latest_checkpoint.clear();
      const auto cp = std::filesystem::path(s.trainer.out_dir()) / "checkpoints";
      std::error_code ec;
      if (std::filesystem::is_directory(cp, ec))
        for (const auto& e : std::filesystem::directory_iterator(cp, ec))
          s.latest_checkpoint = std::max(s.latest_checkpoint, e.path().string());
    }
    ImGui::SameLine();
    ImGui::BeginDisabled(s.latest_checkpoint.empty());
    if (ImGui::Button(tr("open this run's checkpoints"))) {
      try {
        app.model->load(s.latest_checkpoint);
        show_model_layer(app, app.model_layer);
      } catch (const Error& e) {
        app.show_banner(e.what(), true, 8.0);
      }
    }
    ImGui::EndDisabled();
  }
  if (!s.refusal.empty()) ImGui::TextColored({0.95f, 0.45f, 0.45f, 1}, "%s", s.refusal.c_str());
  if (const std::string err = s.trainer.error(); !err.empty()) ImGui::TextColored({0.95f, 0.45f, 0.45f, 1}, "%s", err.c_str());
}

}  // namespace

bool start_model_training(App& app) {
  if (!app.timeline) app.timeline = std::make_shared<TimelinePanelState>();
  TimelinePanelState& s = *app.timeline;
  try {
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("attnsim-train-" + std::to_string(::getpid()))).string();
    s.trainer.start(s.settings, dir);
    s.trained_here = true;
    s.refusal.clear();
    return true;
  } catch (const Error& e) {
    s.refusal = e.what();
    app.show_banner(e.what(), true, 8.0);
    return false;
  }
}

bool model_training(const App& app) { return app.timeline && app.timeline->trainer.running(); }

void model_timeline_tab(App& app) {
  if (!app.timeline) app.timeline = std::make_shared<TimelinePanelState>();
  TimelinePanelState& s = *app.timeline;
  ModelView& v = *app.model;
  if (s.trained_here) s.trainer.update(s.live, &s.live_run);
  controls(app, s);

  // What to plot: the run training here, else the loaded run's log (read once).
  const Timeline* tl = &s.live;
  if (!s.trained_here) {
    const auto runs = v.timeline();
    const std::string path = runs.empty() ? "" : (std::filesystem::path(runs.back()) / "train_log.jsonl").string();
    if (path != s.log_path) {
      s.log_path = path;
      s.log = {};
      if (!path.empty() && std::filesystem::exists(path)) {
        try {
          s.log = read_train_log(path);
        } catch (const Error& e) {
          app.show_banner(e.what(), true, 8.0);
        }
      }
    }
    tl = &s.log;
  }
  if (tl->points.empty()) {
    ImGui::TextDisabled("%s", tr("no training log: press Start, or open a run with train_log.jsonl"));
    return;
  }
  const PlotLines& lines = plot_lines(s.lines, *tl, s.trained_here ? "run " + std::to_string(s.live_run) : s.log_path);
  const TimelinePoint& last = tl->points.back();
  const float x_max = static_cast<float>(s.trained_here ? std::max<int64_t>(s.trainer.steps(), last.step) : last.step);
  ImGui::TextUnformatted(
      trf("step %lld, loss %.3f, %.0f s", static_cast<long long>(last.step), last.loss, last.seconds).c_str());
  std::vector<std::tuple<float, ImU32, std::string>> marks;
  if (lines.phase >= 0) marks.emplace_back(static_cast<float>(lines.phase), IM_COL32(255, 150, 20, 255), tr("phase change"));
  if (v.loaded() && v.step() > 0) marks.emplace_back(static_cast<float>(v.step()), IM_COL32(255, 255, 255, 200), tr("shown"));

  const float w = ImGui::GetContentRegionAvail().x;
  plot(tr("loss per part (nats)"), {w, 150}, lines.loss, x_max, 0, std::max(lines.loss_hi, 0.1f), marks);
  const char* titles[3] = {tr("induction score per head"), tr("previous-token score per head"),
                           tr("first-token share per head")};
  for (int r = 0; r < 3; ++r) plot(titles[r], {w, 110}, lines.roles[r], x_max, 0, 1, marks);
}

}  // namespace attnsim::app
