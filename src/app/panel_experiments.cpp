// The model panel's Experiments tab: the article's claims as one-click runs of
// model::run_experiment on a worker thread (progress line while it trains), each shown as a
// figure (experiment_figure.h: the same charts and conclusion its slide exports).
//   ablation      Δ repeat accuracy (points) per head knocked out alone
//   dk-sweep      mean row entropy and final loss per h (d_k = d_model / h)
//   prune         repeat accuracy: prune-after vs train-few, per number of heads kept
//   one-vs-many   final loss and repeat accuracy, h = 1 vs h = 8 at equal parameters
//   roles / sink  induction score before vs after training / first-token share per head
//   streaming     next-token loss by position under each cache policy
// roles, ablation and sink use the loaded checkpoint; the others train their own models.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "app/app.h"
#include "views/experiment_figure.h"
#include "app/figure_imgui.h"
#include "views/i18n.h"
#include "views/model_view.h"
#include "engine/error.h"
#include "figure/slide.h"
#include "model/experiments/experiments.h"
#include "views/tasks.h"

namespace attnsim::app {

struct ExperimentsPanelState {
  Task<model::ExperimentResult> job;
  std::string running;  // the experiment's name while it runs
  std::shared_ptr<std::mutex> mutex = std::make_shared<std::mutex>();
  std::shared_ptr<std::string> progress = std::make_shared<std::string>();
  bool have = false;
  model::ExperimentResult result;
  std::string error;
  int steps = kExperimentSteps;  // training steps of every model an experiment trains
  uint64_t revision = 0;  // results landed so far: the figure is rebuilt for a new one
  std::string figure_key, figure_error;
  figure::Figure figure;
};

namespace {

// The result's figure (experiment_figure.h) at the panel's width, drawn through the ImGui
// sink; rebuilt only when the result, width, theme or language changes.
void draw_result(ExperimentsPanelState& s, const std::string& theme) {
  const float scale = ImGui::GetFontSize() / figure::kLabelMin;
  const float avail = ImGui::GetContentRegionAvail().x;
  const std::string key = s.result.name + "|" + std::to_string(s.revision) + "|" + std::to_string(static_cast<int>(avail)) +
                          "|" + theme + "|" + (ui_lang() == Lang::Ko ? "ko" : "en");
  if (key != s.figure_key) {
    s.figure_key = key;
    s.figure_error.clear();
    try {
      s.figure = experiment_view(s.result, ui_lang(), theme, avail / scale);
      want_figure_glyphs(s.figure);
    } catch (const Error& e) {
      s.figure = {};
      s.figure_error = e.what();
    }
  }
  if (!s.figure_error.empty()) {
    ImGui::TextColored({0.95f, 0.45f, 0.45f, 1}, "%s", s.figure_error.c_str());
    return;
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  draw_figure(ImGui::GetWindowDrawList(), s.figure, origin, scale, Backdrop::Window);
  ImGui::Dummy({s.figure.width * scale, s.figure.height * scale});
}

// Why an experiment says nothing about the model on screen ("" when it does): the ones that
// read the checkpoint measure it on the induction task (BOS 0, then random tokens repeated),
// which a language model never saw (its sequences start with <|endoftext|>; its repeat
// accuracy there is 0 %).
std::string refusal(const ModelView& v, const std::string& name) {
  if (!v.text_model() || !model::uses_model_dir(name)) return "";
  return tr("This experiment measures the checkpoint on the induction task (BOS, then random tokens repeated); the language model on screen was trained on text, so its numbers would say nothing about it. Open a toy checkpoint (assets/models/induction) to run it.");
}

}  // namespace

bool experiment_running(const App& app) { return app.experiments && app.experiments->job.valid(); }

void model_experiments_tab(App& app) {
  if (!app.experiments) app.experiments = std::make_shared<ExperimentsPanelState>();
  ExperimentsPanelState& s = *app.experiments;
  if (s.job.valid() && s.job.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try {
      s.result = s.job.get();
      s.have = true;
      ++s.revision;
      s.error.clear();
    } catch (const Error& e) {
      s.error = e.what();
    }
    s.running.clear();
  }
  const bool busy = s.job.valid();
  ImGui::BeginDisabled(busy);
  ImGui::SetNextItemWidth(140);
  ImGui::InputInt(tr("training steps per model"), &s.steps);
  s.steps = std::clamp(s.steps, 50, 20000);
  // One button per experiment, its name (as `attnsim-cli experiment NAME` takes it) in the UI
  // language; a button that would pass the panel's right edge starts a new row.
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  for (const std::string& name : model::kExperimentNames) {
    const char* label = tr(name.c_str());
    const float w = ImGui::CalcTextSize(label).x + 2 * ImGui::GetStyle().FramePadding.x;
    if (name != model::kExperimentNames.front() &&
        ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w <= right)
      ImGui::SameLine();
    ImGui::PushID(name.c_str());
    const std::string why = refusal(*app.model, name);
    ImGui::BeginDisabled(!why.empty());
    if (ImGui::Button(label)) run_model_experiment(app, name);
    ImGui::EndDisabled();
    if (!why.empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28);
      ImGui::TextUnformatted(why.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
    ImGui::PopID();
  }
  ImGui::EndDisabled();
  if (busy) {
    std::lock_guard<std::mutex> lock(*s.mutex);
    ImGui::Text("%s: %s", tr(s.running.c_str()), s.progress->empty() ? tr("starting") : s.progress->c_str());
    ImGui::ProgressBar(static_cast<float>(std::fmod(ImGui::GetTime(), 1.0)), {200, 0}, "");
  }
  if (!s.error.empty()) ImGui::TextColored({0.95f, 0.45f, 0.45f, 1}, "%s", s.error.c_str());
  if (!s.have) {
    ImGui::TextDisabled("%s", tr("roles, ablation and sink use the loaded checkpoint; the others train their own models"));
    return;
  }
  ImGui::Text("%s", tr(s.result.name.c_str()));
  draw_result(s, panel_theme().name);  // a working panel: the UI's theme, not the slide theme
  if (ImGui::TreeNode("##table", "%s", tr("table"))) {
    ImGui::TextUnformatted(s.result.table.c_str());
    ImGui::TreePop();
  }
}

void run_model_experiment(App& app, const std::string& name) {
  if (!app.experiments) app.experiments = std::make_shared<ExperimentsPanelState>();
  ExperimentsPanelState& s = *app.experiments;
  if (s.job.valid()) return;
  model::ExperimentOptions o = experiment_options(app.model->model().config, app.model->dir(), s.steps);
  *s.progress = "";
  o.progress = [m = s.mutex, p = s.progress](const std::string& text) {
    std::lock_guard<std::mutex> lock(*m);
    *p = text;
  };
  s.running = name;
  s.job = start_task([name, o] { return model::run_experiment(name, o); });
}

// Blocks until the experiment on the worker lands (headless export).
void wait_model_experiment(App& app) {
  if (app.experiments && app.experiments->job.valid()) app.experiments->job.wait();
}

}  // namespace attnsim::app
