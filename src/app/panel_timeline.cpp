// The model panel's Training tab: train live on a worker thread (Trainer), or read the
// loaded run's train_log.jsonl, and plot
//   - the loss per task part (first copy, repeated part) against the step
//   - each head's role scores (induction, previous-token, first-token) against the step
//   - the phase change: where the largest head's induction score jumps (training.h)
//   - where the scrubbed checkpoint sits
//   - the uniform guess's loss, ln(V-1), as a dashed line
//   - for a run whose recipe was trained with several seeds (run_group.h): the spread over
//     them (band, median, each seed, the open one highlighted) and how many learned
// The plots are the timeline slide's (model_slides.h add_timeline_plots), in one column,
// drawn through the ImGui sink: the tab and `--export --slide --panel timeline` show one
// figure. The tab first says what a run trains (a new model on the induction task, training.h);
// while one trains, its progress (step N of M, loss, time left) and plots come first and the
// loaded run's plots stay below, dimmed.
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>

#include <unistd.h>

#include "app/app.h"
#include "app/figure_imgui.h"
#include "views/i18n.h"
#include "views/model_slides.h"
#include "views/model_view.h"
#include "views/run_group.h"
#include "views/tasks.h"
#include "views/training.h"
#include "model/experiments/baselines.h"
#include "model/formats/checkpoint.h"
#include "engine/error.h"
#include "figure/slide.h"

namespace attnsim::app {

namespace {

// The plots' figure, rebuilt when the timeline grows, is another run or log, or the width,
// language, theme or shown step changes; not every frame.
struct PlotFigure {
  std::string key;
  figure::Figure figure;
};

}  // namespace

struct TimelinePanelState {
  Trainer trainer;
  TrainSettings settings;
  std::string log_path;  // the loaded run's log, read once
  Timeline log;
  RunGroup group;             // the loaded run and the other seeds of its recipe
  std::optional<model::ModelConfig> config;  // the loaded run's (its vocabulary sets the baseline)
  std::optional<LearnedCount> learned;  // several seeds: how many learned the task
  Task<LearnedCount> learned_job;       // its count, off the frame (a forward pass per seed)
  Timeline live;              // the trainer's points so far (Trainer::update appends)
  uint64_t live_run = 0;
  bool trained_here = false;  // the plots show the trainer's run, not the log
  std::string refusal;        // why the last Start was refused
  PlotFigure plots;            // the plotted run: the live one, else the loaded run's log
  PlotFigure log_plots;        // the loaded run's log, dimmed under a live run
  uint64_t settings_for = 0;   // the model view's load_id the settings were defaulted for
  // The run's newest saved checkpoint, listed once a second, not every frame.
  std::string latest_checkpoint;
  std::chrono::steady_clock::time_point latest_at;
  // When the live run last logged a step: the run trains below the UI (training.h), so a
  // machine whose cores are all busy can hold it, and the tab says so rather than look frozen.
  size_t seen_points = 0;
  std::chrono::steady_clock::time_point points_at;
};

namespace {

// What Start trains, in words: a new model on the induction task, and what happens to the
// model on screen (nothing: its weights stay; a language model is not retrained here).
void what_it_trains(const ModelView& v, const TrainSettings& t) {
  const model::ModelConfig task;  // the built-in task's vocabulary and length
  const model::ModelConfig& c = v.model().config;
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(trf("Start trains a new model from random weights on the induction task (random tokens, then the same tokens again: %lld token types, %lld positions): %lld layers x %lld heads, d_model %lld.",
                             static_cast<long long>(task.vocab), static_cast<long long>(task.seq_len),
                             static_cast<long long>(t.layers), static_cast<long long>(t.heads),
                             static_cast<long long>(t.d_model)).c_str());
  if (v.loaded() && v.text_model())
    ImGui::TextDisabled("%s", trf("The language model on screen (%lld layers, d_model %lld, trained on text) stays as it is: it took far longer to train than a run here, so the new model is smaller.",
                                  static_cast<long long>(c.layers), static_cast<long long>(c.d_model)).c_str());
  else if (v.loaded())
    ImGui::TextDisabled("%s", tr("The model on screen keeps its weights; the run starts from its shape."));
  ImGui::PopTextWrapPos();
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
    s.settings_for = 0;  // the model on screen's defaults again
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

int64_t model_training_step(App& app) {
  if (!app.timeline || !app.timeline->trained_here) return 0;
  app.timeline->trainer.update(app.timeline->live, &app.timeline->live_run);
  return app.timeline->live.points.empty() ? 0 : app.timeline->live.points.back().step;
}

namespace {

// One run's plots, `x_max` steps wide, rebuilt when `run` (its name), its length, the width,
// language, theme or shown step change; `dim`: under a wash of the window's colour.
void plot_timeline(PlotFigure& plots, const Timeline& tl, int64_t x_max, const ModelView& v,
                   std::optional<model::ModelConfig> config, const RunGroup* group, const std::string& run, bool dim) {
  const float scale = ImGui::GetFontSize() / figure::kLabelMin;
  const float width = ImGui::GetContentRegionAvail().x / scale;
  const int64_t shown = v.loaded() && v.step() > 0 ? v.step() : -1;
  const lessons::Lang lang = panel_lang();
  const std::string key = run + "|" + std::to_string(tl.points.size()) + "|" + std::to_string(x_max) + "|" +
                          std::to_string(shown) + "|" + std::to_string(static_cast<int>(width)) + "|" +
                          panel_theme().name + "|" + (lang == lessons::Lang::Ko ? "ko" : "en");
  if (key != plots.key) {
    plots.key = key;
    const figure::Theme& th = panel_theme();  // a working tab: the UI's theme, not the slide theme
    figure::Figure& f = plots.figure;
    f = {};
    f.theme = th.name;
    f.background = th.background;
    f.width = width;
    f.height = 4 * 420;
    TimelineExtras extras;
    extras.config = config;
    extras.group = group;
    add_timeline_plots(f, th, {8, 8, width - 16, f.height - 16}, tl, static_cast<double>(x_max), shown, lang, false,
                       extras);
    want_figure_glyphs(f);
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos(), size{plots.figure.width * scale, plots.figure.height * scale};
  ImDrawList* list = ImGui::GetWindowDrawList();
  draw_figure(list, plots.figure, origin, scale, Backdrop::Window);
  if (dim) {
    ImVec4 wash = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
    wash.w = 0.55f;
    list->AddRectFilled(origin, {origin.x + size.x, origin.y + size.y}, ImGui::GetColorU32(wash));
  }
  ImGui::Dummy(size);
}

}  // namespace

void model_timeline_tab(App& app) {
  if (!app.timeline) app.timeline = std::make_shared<TimelinePanelState>();
  TimelinePanelState& s = *app.timeline;
  ModelView& v = *app.model;
  if (s.trained_here) s.trainer.update(s.live, &s.live_run);
  if (!s.trainer.running() && v.loaded() && s.settings_for != v.load_id()) {
    s.settings = settings_for(v.model().config, v.text_model());
    s.settings_for = v.load_id();
  }
  what_it_trains(v, s.settings);
  controls(app, s);
  const auto now = std::chrono::steady_clock::now();
  if (s.live.points.size() != s.seen_points || !s.trainer.running()) {
    s.seen_points = s.live.points.size();
    s.points_at = now;
  }
  if (s.trainer.running()) {
    const int64_t planned = s.trainer.steps(), done = s.live.points.empty() ? 0 : s.live.points.back().step;
    ImGui::ProgressBar(static_cast<float>(done) / static_cast<float>(std::max<int64_t>(planned, 1)), {-1, 0},
                       progress_text(s.live, planned, ui_lang()).c_str());
    const double still = std::chrono::duration<double>(now - s.points_at).count();
    if (still > 3)
      ImGui::TextColored({0.95f, 0.75f, 0.35f, 1}, "%s",
                         trf("no step finished for %.0f s: every core is busy (the run takes only what the window leaves)",
                             still).c_str());
  }

  // The loaded run's log (read once per run): plotted alone, or dimmed under a live run.
  {
    const auto runs = v.timeline();
    const std::string path = runs.empty() ? "" : (std::filesystem::path(runs.back()) / "train_log.jsonl").string();
    if (path != s.log_path) {
      s.log_path = path;
      s.log = {};
      s.group = {};
      s.config.reset();
      s.learned.reset();
      s.learned_job = {};
      if (!path.empty() && std::filesystem::exists(path)) {
        const std::string run = std::filesystem::path(path).parent_path().string();
        try {
          // Read once per run: the seeds' logs now, and their final checkpoints evaluated
          // for the learned count as a task (about 0.3 s of forward passes, which stalled
          // the frame when it ran here).
          s.group = read_run_group(run);
          s.log = s.group.timelines[s.group.open];
          s.config = s.group.config;
          // "Learned" is the induction task's repeat accuracy: a language model's runs have no
          // such task (and the page ships only their logs: no weights to count with).
          const bool text_run = std::filesystem::exists(std::filesystem::path(run) / "tokenizer.json");
          if (s.group.several() && !text_run) s.learned_job = start_task([g = s.group] { return count_learned(g); });
        } catch (const Error& e) {
          // The run alone, when its recipe's seeds cannot be read or do not line up.
          app.show_banner(e.what(), true, 8.0);
          s.group = {};
          try {
            s.log = read_train_log(path);
            s.config = model::read_checkpoint_header(run).config;
          } catch (const Error& again) {
            app.show_banner(again.what(), true, 8.0);
          }
        }
      }
    }
  }
  const Timeline* tl = s.trained_here ? &s.live : &s.log;
  if (s.learned_job.valid() && s.learned_job.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try {
      s.learned = s.learned_job.get();
    } catch (const Error& e) {
      app.show_banner(e.what(), true, 8.0);
    }
    s.learned_job = {};
  }
  if (tl->points.empty()) {
    ImGui::TextDisabled("%s", tr("no training log: press Start, or open a run with train_log.jsonl"));
    return;
  }
  const TimelinePoint& last = tl->points.back();
  if (s.trained_here)
    ImGui::TextUnformatted(tr("the new run"));
  else
    ImGui::TextUnformatted(
        trf("step %lld, loss %.3f, %.0f s", static_cast<long long>(last.step), last.loss, last.seconds).c_str());
  const bool group = !s.trained_here && s.group.several();
  if (group && s.learned)
    ImGui::TextUnformatted(trf("%lld of %lld seeds learned (repeat accuracy >= %.0f%%)",
                               static_cast<long long>(s.learned->learned), static_cast<long long>(s.learned->runs),
                               100 * model::kRunLearned).c_str());
  // The baseline's vocabulary: the loaded run's, or the built-in task's for a run trained here.
  plot_timeline(s.plots, *tl, s.trained_here ? std::max<int64_t>(s.trainer.steps(), last.step) : last.step, v,
                s.trained_here ? std::optional<model::ModelConfig>(model::ModelConfig{}) : s.config,
                group ? &s.group : nullptr, (s.trained_here ? "run " + std::to_string(s.live_run) : s.log_path), false);
  if (s.trained_here && !s.log.points.empty()) {
    ImGui::Separator();
    ImGui::TextDisabled("%s", trf("the run of the model on screen (step %lld, loss %.3f), dimmed while the new run trains",
                                  static_cast<long long>(s.log.points.back().step), s.log.points.back().loss).c_str());
    plot_timeline(s.log_plots, s.log, s.log.points.back().step, v, s.config, nullptr, s.log_path, true);
  }
}

}  // namespace attnsim::app
