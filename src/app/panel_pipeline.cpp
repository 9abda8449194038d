// Pipeline panel: every trace step in order with shape, strides, a view/copy badge and
// bytes; click to jump; transport (step, play/pause, speed, duration) and a scrubber.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/app.h"
#include "views/i18n.h"
#include "views/step_names.h"
#include "engine/blas_kernels.h"
#include "engine/cost.h"

namespace attnsim::app {

namespace {

ImVec4 badge_colour(StepKind kind) {
  switch (kind) {
    case StepKind::View: return {0.30f, 0.65f, 0.95f, 1};     // blue: no memory
    case StepKind::Copy: return {0.95f, 0.55f, 0.15f, 1};     // orange: moves bytes
    case StepKind::Compute: return {0.45f, 0.80f, 0.45f, 1};  // green: new values
    case StepKind::Input: return {0.80f, 0.80f, 0.80f, 1};
    case StepKind::Skipped: return {0.45f, 0.45f, 0.45f, 1};
  }
  return {1, 1, 1, 1};
}

const char* badge_text(StepKind kind) {
  switch (kind) {
    case StepKind::View: return tr("view");
    case StepKind::Copy: return tr("copy");
    case StepKind::Compute: return tr("compute");
    case StepKind::Input: return tr("input");
    case StepKind::Skipped: return tr("skipped");
  }
  return "";
}

// "(1,6,16)": format_dims without spaces, so shape, strides and bytes fit one line.
std::string dims_text(const Dims& d, char open = '(', char close = ')') {
  std::string out(1, open);
  for (size_t i = 0; i < d.size(); ++i) out += (i ? "," : "") + std::to_string(d[i]);
  return out + close;
}

// The scrubber position: active step k plus the transition progress into step k.
void scrubber(App& app, const std::vector<bool>& active) {
  std::vector<int> order;
  for (size_t i = 0; i < active.size(); ++i)
    if (active[i]) order.push_back(static_cast<int>(i));
  if (order.size() < 2) return;
  int k = 0;
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] == app.playback.step) k = static_cast<int>(i);
  float pos = static_cast<float>(k) - (app.playback.animating() ? 1.0f - app.playback.t : 0.0f);
  ImGui::SetNextItemWidth(-1);
  if (ImGui::SliderFloat("##scrub", &pos, 0.0f, static_cast<float>(order.size() - 1), "")) {
    const int hi = std::min(static_cast<int>(std::ceil(pos)), static_cast<int>(order.size()) - 1);
    const int lo = std::max(hi - 1, 0);
    const float t = hi == 0 ? 1.0f : 1.0f - (static_cast<float>(hi) - pos);
    scrub(app.playback, order[static_cast<size_t>(lo)], order[static_cast<size_t>(hi)], t);
    app.playback.paused = t < 1.0f;
  }
}

}  // namespace

void panel_pipeline(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "pipeline", tr("Pipeline"), rect)) return end_panel();
  const RunData* d = app.data();
  if (!d) {
    ImGui::TextUnformatted(tr("Computing"));
    return end_panel();
  }
  const auto active = app.active_steps();
  Playback& p = app.playback;

  // transport
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) go_to(p, prev_step(active, p.step), false);
  ImGui::SameLine();
  const char* play = p.playing && !p.paused ? tr("Pause") : tr("Play");
  if (ImGui::Button(play)) {
    if (p.animating() && !p.playing) p.paused = !p.paused;
    else { p.playing = !p.playing; p.paused = false; }
  }
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right)) go_to(p, next_step(active, p.step));
  ImGui::SameLine();
  ImGui::TextDisabled("← → %s", "space");
  scrubber(app, active);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.5f);
  ImGui::SliderFloat(tr("Speed"), &p.speed, 0.25f, 4.0f, "%.2fx");
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.5f);
  ImGui::SliderFloat(tr("Duration (s)"), &p.duration, 0.1f, 3.0f, "%.1f");
  ImGui::Checkbox(tr("Reduced motion"), &p.reduced_motion);
  ImGui::Separator();

  // the steps
  // Below the list: held bytes, the run's time and the BLAS line (the advice when the kernels
  // are weaker than the CPU is Help > About's, behind the menu bar's mark).
  ImGui::BeginChild("steps", {0, -ImGui::GetTextLineHeightWithSpacing() * 4.2f});
  const auto& steps = d->run.trace.steps;
  float name_x = 0;
  for (StepKind k : {StepKind::View, StepKind::Copy, StepKind::Compute, StepKind::Input})
    name_x = std::max(name_x, ImGui::CalcTextSize(badge_text(k)).x);
  name_x += ImGui::GetStyle().ItemSpacing.x * 2;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    ImGui::PushID(static_cast<int>(i));
    const bool current = static_cast<int>(i) == p.step;
    if (s.skipped()) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    const float y0 = ImGui::GetCursorPosY();
    if (ImGui::Selectable("##step", current, 0, {0, ImGui::GetTextLineHeight() * 2.05f}) && !s.skipped())
      go_to(p, static_cast<int>(i), std::abs(static_cast<int>(i) - p.step) == 1);
    if (current && p.animating()) ImGui::SetScrollHereY(0.4f);
    ImGui::SetCursorPosY(y0);
    ImGui::TextColored(badge_colour(s.kind), "%-5s", badge_text(s.kind));
    ImGui::SameLine(name_x);
    // The step in words (its stable name, the dumps' and lessons', leads the line below).
    ImGui::TextUnformatted(step_display_name(s.name, ui_lang()).c_str());
    if (s.nan_count > 0) {
      ImGui::SameLine();
      ImGui::TextColored({0.95f, 0.1f, 0.85f, 1}, "NaN %lld", static_cast<long long>(s.nan_count));
    }
    // the detail line starts under the badge: the article's shapes need the width
    ImGui::SetCursorPosX(ImGui::GetStyle().ItemSpacing.x * 2);
    if (s.out.defined()) {
      // shape, then strides in brackets, then the bytes this step allocated or copied
      std::string info = (has_step_display_name(s.name) ? s.name + " " : "") + dims_text(s.out.shape()) + " " +
                         dims_text(s.out.strides(), '[', ']');
      if (s.copied_bytes > 0) info += " " + human_bytes(s.copied_bytes);
      else if (s.new_bytes > 0) info += " +" + human_bytes(s.new_bytes);
      ImGui::TextDisabled("%s", info.c_str());
    } else {
      ImGui::TextDisabled("%s %s", s.name.c_str(), s.note.empty() ? tr("skipped") : tr(s.note.c_str()));
    }
    if (s.skipped()) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered() && s.out.defined()) {
      ImGui::BeginTooltip();
      ImGui::Text("%s  %s", s.name.c_str(), s.op.c_str());
      ImGui::Text("%s %s  %s %s  %s %lld", tr("shape"), format_dims(s.out.shape()).c_str(),
                  tr("strides"), format_dims(s.out.strides()).c_str(), tr("offset"),
                  static_cast<long long>(s.out.offset()));
      ImGui::Text("%s #%lld  %s", tr("storage"), static_cast<long long>(s.storage_id),
                  s.copied_bytes > 0 ? (human_bytes(s.copied_bytes) + " " + tr("copied")).c_str()
                                     : (human_bytes(s.new_bytes) + " " + tr("new storage")).c_str());
      if (!s.note.empty()) ImGui::TextWrapped("%s", s.note.c_str());
      ImGui::EndTooltip();
    } else if (ImGui::IsItemHovered() && !s.note.empty()) {
      ImGui::SetTooltip("%s", s.note.c_str());
    }
    ImGui::PopID();
  }
  if (!d->run.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.4f, 0.4f, 1));
    ImGui::TextWrapped("%s", d->run.error.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::EndChild();
  ImGui::Separator();
  ImGui::Text("%s: %s", tr("held by the trace"), human_bytes(d->run.trace.held_bytes()).c_str());
  // Status: this run's time, the backend, and which BLAS kernels ran it at what rate.
  const BlasKernels& blas = blas_kernels();
  char run_line[96];
  std::snprintf(run_line, sizeof run_line, "%.1f ms · %s", d->compute_ms, app.session.backend().c_str());
  ImGui::TextDisabled("%s", run_line);
  ImGui::TextDisabled("%s · %s", blas.library.c_str(), blas.core.c_str());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", blas.summary().c_str());
  const double gflops = app.session.sgemm_gflops();  // 0 until an attention-layer run measured it
  // Units and library names read the same in every language.
  char rate[64];
  if (gflops > 0 && std::isfinite(gflops)) std::snprintf(rate, sizeof rate, "sgemm %.0f GFLOP/s", gflops);
  else std::snprintf(rate, sizeof rate, "sgemm: %s", tr("not measured yet"));
  ImGui::TextDisabled("%s", rate);
  end_panel();
}

}  // namespace attnsim::app
