// The model panel's Experiments tab: the article's claims as one-click runs of
// model::run_experiment on a worker thread (progress line while it trains), each shown as a
// bar chart drawn with ImGui's draw list and the experiment's own one-line conclusion.
//   ablation      Δ repeat accuracy (points) per head knocked out alone
//   dk-sweep      mean row entropy and final loss per h (d_k = d_model / h)
//   prune         repeat accuracy: prune-after vs train-few, per number of heads kept
//   one-vs-many   final loss and repeat accuracy, h = 1 vs h = 8 at equal parameters
//   roles / sink  induction score before vs after training / first-token share per head
// roles, ablation and sink use the loaded checkpoint; the others train their own models.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <mutex>

#include "app/app.h"
#include "app/i18n.h"
#include "app/model_view.h"
#include "engine/error.h"
#include "model/experiments.h"

namespace attnsim::app {

struct ExperimentsPanelState {
  std::future<model::ExperimentResult> job;
  std::string running;  // the experiment's name while it runs
  std::shared_ptr<std::mutex> mutex = std::make_shared<std::mutex>();
  std::shared_ptr<std::string> progress = std::make_shared<std::string>();
  bool have = false;
  model::ExperimentResult result;
  std::string error;
  int steps = 600;  // training steps of every model an experiment trains
};

namespace {

struct Bar {
  std::string label;
  std::vector<float> values;  // one per group member
};

// Grouped bars: each Bar is one x position with one bar per series (colours[k]).
void bars(const char* title, const std::vector<Bar>& data, const std::vector<std::string>& series,
          const std::vector<ImU32>& colours, float height) {
  ImGui::TextUnformatted(title);
  if (data.empty()) return;
  float lo = 0, hi = 0;
  for (const Bar& b : data)
    for (float v : b.values) lo = std::min(lo, v), hi = std::max(hi, v);
  if (hi - lo < 1e-6f) hi = lo + 1;
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x, line = ImGui::GetTextLineHeight();
  const float left = 48, top = p.y + line + 2, bottom = p.y + height - line - 4;
  auto Y = [&](float v) { return bottom - (bottom - top) * (v - lo) / (hi - lo); };
  list->AddRectFilled({p.x + left, top}, {p.x + w - 4, bottom}, IM_COL32(24, 26, 32, 255));
  char buf[32];
  for (float v : {lo, 0.0f, hi}) {
    std::snprintf(buf, sizeof buf, "%.3g", static_cast<double>(v));
    list->AddText({p.x, Y(v) - line / 2}, IM_COL32(170, 170, 180, 255), buf);
    list->AddLine({p.x + left, Y(v)}, {p.x + w - 4, Y(v)}, IM_COL32(70, 70, 80, 255));
  }
  const float slot = (w - left - 8) / static_cast<float>(data.size());
  const float bw = std::max(2.0f, slot * 0.8f / static_cast<float>(std::max<size_t>(series.size(), 1)));
  for (size_t i = 0; i < data.size(); ++i) {
    const float x0 = p.x + left + 4 + slot * static_cast<float>(i);
    for (size_t k = 0; k < data[i].values.size(); ++k) {
      const float v = data[i].values[k], x = x0 + bw * static_cast<float>(k);
      list->AddRectFilled({x, std::min(Y(v), Y(0))}, {x + bw - 1, std::max(Y(v), Y(0))}, colours[k % colours.size()]);
      if (data[i].values.size() == 1 || slot > 70) {
        std::snprintf(buf, sizeof buf, "%.2g", static_cast<double>(v));
        list->AddText({x, std::min(Y(v), Y(0)) - line}, IM_COL32(220, 220, 225, 255), buf);
      }
    }
    list->AddText({x0, bottom + 2}, IM_COL32(200, 200, 210, 255), data[i].label.c_str());
  }
  ImGui::Dummy({w, height});
  for (size_t k = 0; k < series.size(); ++k) {
    if (k) ImGui::SameLine();
    const ImVec2 q = ImGui::GetCursorScreenPos();
    list->AddRectFilled({q.x, q.y + line * 0.25f}, {q.x + 12, q.y + line * 0.75f}, colours[k % colours.size()]);
    ImGui::Dummy({14, line});
    ImGui::SameLine(0, 2);
    ImGui::TextUnformatted(series[k].c_str());
  }
}

float num(const nlohmann::json& j, const char* key) { return j.contains(key) ? j[key].get<float>() : 0.0f; }
std::string head_name(const nlohmann::json& j) {
  return std::to_string(j.value("layer", 0)) + "." + std::to_string(j.value("head", 0));
}

void chart(const model::ExperimentResult& r) {
  const ImU32 blue = IM_COL32(100, 170, 255, 255), orange = IM_COL32(255, 150, 20, 255);
  std::vector<Bar> a, b;
  const auto& j = r.json;
  if (!j.is_array()) return;
  if (r.name == "ablation") {
    for (const auto& e : j) a.push_back({head_name(e), {num(e, "delta_accuracy_points")}});
    bars(tr("repeat accuracy change when the head is knocked out (points)"), a, {tr("Δ accuracy")}, {orange}, 170);
  } else if (r.name == "dk-sweep") {
    for (const auto& e : j) {
      const std::string l = "h=" + std::to_string(e.value("heads", 0));
      a.push_back({l, {num(e, "entropy")}});
      b.push_back({l, {num(e, "loss")}});
    }
    bars(tr("mean attention row entropy (nats)"), a, {tr("entropy")}, {blue}, 130);
    bars(tr("final loss"), b, {tr("loss")}, {orange}, 130);
  } else if (r.name == "prune") {
    for (const auto& e : j)
      a.push_back({trf("%d heads", e.value("heads", 0)),
                   {e["prune_after"].value("accuracy", 0.0f), e["train_few"].value("accuracy", 0.0f)}});
    bars(tr("repeat accuracy"), a, {tr("prune after training 8"), tr("train with few")}, {blue, orange}, 170);
  } else if (r.name == "one-vs-many") {
    for (const auto& e : j) {
      const std::string l = "h=" + std::to_string(e.value("heads", 0));
      a.push_back({l, {num(e, "loss_repeat")}});
      b.push_back({l, {num(e, "accuracy")}});
    }
    bars(tr("repeat loss"), a, {tr("loss")}, {orange}, 130);
    bars(tr("repeat accuracy"), b, {tr("accuracy")}, {blue}, 130);
  } else if (r.name == "roles") {
    for (const auto& e : j)
      a.push_back({head_name(e), {e["induction"][0].get<float>(), e["induction"][1].get<float>()}});
    bars(tr("induction score per head"), a, {tr("before training"), tr("after")}, {blue, orange}, 170);
  } else if (r.name == "sink") {
    for (const auto& e : j) a.push_back({head_name(e), {num(e, "first")}});
    bars(tr("first-token share per head"), a, {tr("first-token share")}, {blue}, 170);
  }
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
    if (ImGui::Button(label)) run_model_experiment(app, name);
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
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.85f, 0.45f, 1));
  ImGui::TextWrapped("%s", tr_filled(s.result.conclusion.format, s.result.conclusion.values).c_str());
  ImGui::PopStyleColor();
  chart(s.result);
  if (ImGui::TreeNode("##table", "%s", tr("table"))) {
    ImGui::TextUnformatted(s.result.table.c_str());
    ImGui::TreePop();
  }
}

void run_model_experiment(App& app, const std::string& name) {
  if (!app.experiments) app.experiments = std::make_shared<ExperimentsPanelState>();
  ExperimentsPanelState& s = *app.experiments;
  if (s.job.valid()) return;
  model::ExperimentOptions o;
  o.base = app.model->model().config;
  o.base.seed = 1;
  o.train.steps = s.steps;
  o.train.adamw.lr = 2e-3f;
  o.model_dir = app.model->dir();
  *s.progress = "";
  o.progress = [m = s.mutex, p = s.progress](const std::string& text) {
    std::lock_guard<std::mutex> lock(*m);
    *p = text;
  };
  s.running = name;
  s.job = std::async(std::launch::async, [name, o] { return model::run_experiment(name, o); });
}

// Blocks until the experiment on the worker lands (headless export).
void wait_model_experiment(App& app) {
  if (app.experiments && app.experiments->job.valid()) app.experiments->job.wait();
}

}  // namespace attnsim::app
