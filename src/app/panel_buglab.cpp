// Bug lab: the scenario's buggy run beside the correct run at the current step, drawn as the
// buglab slide's figure (buglab_view.h: correct / with the bug / difference for one head)
// through the ImGui sink; NaN / -inf counts per step for both, "check that every hidden
// position has weight exactly 0", and "run to first NaN" as widgets around it.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/app.h"
#include "views/buglab_view.h"
#include "app/figure_imgui.h"
#include "views/i18n.h"
#include "engine/error.h"

namespace attnsim::app {

void buglab_check_hidden(App& app) {
  const RunData* d = app.data();
  // Which positions should be hidden: the correct mask (a mask bug's own mask is wrong).
  const bool mask_bug = is_mask_bug(d->config.bug) && d->has_reference;
  const Trace& mask_trace = mask_bug ? d->reference.trace : d->run.trace;
  const Step* mask = mask_trace.find("mask");
  const Step* alpha = d->run.trace.find("alpha_dropped");
  if (!alpha || alpha->skipped()) alpha = d->run.trace.find("alpha");
  if (!mask || mask->skipped() || !alpha || !alpha->out.defined()) {
    app.hidden_check = "no mask in this configuration: nothing is hidden";
    app.hidden_check_pass = true;
    return;
  }
  const Dims& s = alpha->out.shape();  // (B, h, Tq, Tk); mask (B, 1, Tq, Tk)
  int64_t checked = 0, failed = 0;
  std::string failures;
  for (int64_t b = 0; b < s[0]; ++b)
    for (int64_t q = 0; q < s[2]; ++q)
      for (int64_t k = 0; k < s[3]; ++k) {
        if (mask->out.at({b, 0, q, k}) == 0.0f) continue;
        for (int64_t h = 0; h < s[1]; ++h) {
          const float w = alpha->out.at({b, h, q, k});
          ++checked;
          if (w == 0.0f) continue;
          if (++failed <= 40) {
            char line[256];
            char value[32];
            if (std::isnan(w)) std::snprintf(value, sizeof value, "NaN");  // not "-nan"
            else std::snprintf(value, sizeof value, "%g", static_cast<double>(w));
            std::snprintf(line, sizeof line, "  %s  b=%lld h=%lld q=%lld k=%lld  %s = %s\n",
                          tr("fail"), static_cast<long long>(b), static_cast<long long>(h),
                          static_cast<long long>(q), static_cast<long long>(k),
                          alpha->name.c_str(), value);
            failures += line;
          }
        }
      }
  char head[160];
  std::snprintf(head, sizeof head, "%s: %lld %s, %lld %s, %lld %s\n", alpha->name.c_str(),
                static_cast<long long>(checked), tr("positions checked"),
                static_cast<long long>(checked - failed), tr("pass"),
                static_cast<long long>(failed), tr("fail"));
  app.hidden_check = head + failures;
  if (failed > 40) app.hidden_check += "  …\n";
  app.hidden_check_pass = failed == 0;
}

void buglab_first_nan(App& app) {
  const std::string first = app.data() ? app.data()->run.trace.first_nan_step() : "";
  if (first.empty()) app.show_banner(tr("no NaN anywhere"), false);
  else go_to(app.playback, app.step_index(first), false);
}

namespace {

void nan_table(App& app) {
  const RunData* d = app.data();
  if (!ImGui::BeginTable("nan", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                       ImGuiTableFlags_SizingFixedFit,
                         {0, ImGui::GetContentRegionAvail().y}))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn(tr("NaN per step"));
  // correct run, then the run with the bug
  ImGui::TableSetupColumn(tr("NaN ok"));
  ImGui::TableSetupColumn(tr("NaN bug"));
  ImGui::TableSetupColumn(tr("-inf ok"));
  ImGui::TableSetupColumn(tr("-inf bug"));
  ImGui::TableHeadersRow();
  for (const Step& s : d->run.trace.steps) {
    const Step* ok = d->reference.trace.find(s.name);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (static_cast<int>(&s - d->run.trace.steps.data()) == app.playback.step) {
      ImGui::TextColored({1, 0.85f, 0.2f, 1}, "%s", s.name.c_str());
      // the table is kept short for the heatmaps: bring the current step's row into view
      if (app.playback.step != app.buglab_table_step) ImGui::SetScrollHereY(0.5f);
    } else
      ImGui::TextUnformatted(s.name.c_str());
    const long long v[4] = {ok ? ok->nan_count : 0, s.nan_count, ok ? ok->neginf_count : 0,
                            s.neginf_count};
    for (long long x : v) {
      ImGui::TableNextColumn();
      if (x) ImGui::TextColored({0.95f, 0.2f, 0.85f, 1}, "%lld", x);
      else ImGui::TextDisabled("0");
    }
  }
  ImGui::EndTable();
  app.buglab_table_step = app.playback.step;
}

}  // namespace

void panel_buglab(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "buglab", tr("Bug lab"), rect)) return end_panel();
  const RunData* d = app.data();
  const Step* step = app.current_step();
  if (!d || !step) return end_panel();
  const Scenario& sc = app.session.scenario();
  const bool ko = ui_lang() == Lang::Ko;
  ImGui::TextUnformatted((ko ? sc.title_ko : sc.title_en).c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("· %s", step->name.c_str());
  ImGui::TextWrapped("%s", (ko ? sc.summary_ko : sc.summary_en).c_str());
  if (!d->has_reference) {
    ImGui::TextDisabled("%s", tr("no reference run for this scenario"));
    return end_panel();
  }

  // actions
  if (ImGui::Button(tr("Check hidden weights are exactly 0"))) buglab_check_hidden(app);
  ImGui::SameLine();
  if (ImGui::Button(tr("Run to first NaN"))) buglab_first_nan(app);
  if (d->config.batch > 1) {
    ImGui::SameLine();
    int b = static_cast<int>(app.batch);
    ImGui::SetNextItemWidth(120);
    if (ImGui::SliderInt(tr("Batch"), &b, 0, static_cast<int>(d->config.batch - 1))) app.batch = b;
  }
  if (!d->run.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.40f, 1));
    ImGui::TextWrapped("%s: %s", tr("engine says"), d->run.error.c_str());
    ImGui::PopStyleColor();
  }

  // The triptych of one head: the figure takes the panel's width and the height the NaN
  // table leaves (never less than a few rows; it scrolls to the current step).
  const int64_t heads = step->out.defined() && step->out.dim() == 4 ? step->out.size(1) : 1;
  if (heads > 1) {
    int hd = static_cast<int>(std::clamp<int64_t>(app.buglab_head, 0, heads - 1));
    ImGui::SetNextItemWidth(120);
    if (ImGui::SliderInt(tr("head"), &hd, 0, static_cast<int>(heads - 1))) app.buglab_head = hd;
    ImGui::SameLine();
  }
  const int64_t head = std::clamp<int64_t>(app.buglab_head, 0, heads - 1);
  const float w = ImGui::GetContentRegionAvail().x;
  const ImGuiStyle& style = ImGui::GetStyle();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  // the table's header and three rows (the step before, this one, the one after)
  const float table_min = 4 * (ImGui::GetTextLineHeight() + style.CellPadding.y * 2) +
                          style.WindowPadding.y * 2 + style.ItemSpacing.y;
  const float room = ImGui::GetContentRegionAvail().y - line;  // minus the difference line
  const float fig_h = std::max(line * 6, std::min(w * 0.42f, room - table_min));
  const float fit = std::max(0.2f, std::min(ImGui::GetFontSize() / figure::kLabelMin, w / 1500.0f));
  const lessons::Lang lang = panel_lang();
  static struct {
    std::string key;
    BuglabView view;
    std::string error;
  } cache;
  const std::string key = std::to_string(d->generation) + "|" + step->name + "|" + std::to_string(app.batch) + "|" +
                          std::to_string(head) + "|" + std::to_string(static_cast<int>(w)) + "x" +
                          std::to_string(static_cast<int>(fig_h)) + "|" + panel_theme().name +
                          (lang == lessons::Lang::Ko ? "|ko" : "|en");
  if (cache.key != key) {
    cache.key = key;
    cache.error.clear();
    BuglabViewSpec spec;
    spec.run = d;
    spec.step = step->name;
    spec.batch = app.batch;
    spec.head = head;
    spec.width = w / fit;
    spec.height = fig_h / fit;
    spec.lang = lang;
    spec.theme = panel_theme().name;
    try {
      cache.view = buglab_view(spec);
      want_figure_glyphs(cache.view.figure);
    } catch (const Error& e) {
      cache.view = {};
      cache.error = e.what();
    }
  }
  const BuglabView& v = cache.view;
  if (!cache.error.empty()) ImGui::TextWrapped("%s", cache.error.c_str());
  else if (v.blocks.empty()) ImGui::TextDisabled("%s", tr("nothing to compare at this step"));
  else if (v.differing == 0) ImGui::TextColored({0.5f, 0.9f, 0.5f, 1}, "%s: %s", tr("difference"), tr("identical"));
  else ImGui::Text("%s: %lld %s", tr("difference"), static_cast<long long>(v.differing), tr("cells differ"));
  if (!v.blocks.empty()) {
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float scale = readable_scale(v.figure, fit);  // a narrow panel scrolls (figure_imgui.h)
    draw_figure(ImGui::GetWindowDrawList(), v.figure, origin, scale, Backdrop::Window);
    app.figure_rects["buglab_bug"] = {origin.x + v.layout.cells[1].x * scale, origin.y + v.layout.cells[1].y * scale,
                                      v.layout.cells[1].w * scale, v.layout.cells[1].h * scale};
    ImGui::InvisibleButton("##buglab-figure", {std::max(w, v.figure.width * scale), std::max(fig_h, v.figure.height * scale)});
    if (ImGui::IsItemHovered()) {
      // the cell under the mouse, found in the figure's own layout
      const ImVec2 m = ImGui::GetIO().MousePos;
      const float fx = (m.x - origin.x) / scale, fy = (m.y - origin.y) / scale;
      for (size_t i = 0; i < v.layout.cells.size() && i < v.blocks.size(); ++i) {
        const figure::Rect& r = v.layout.cells[i];
        const figure::Block& b = v.blocks[i];
        if (fx < r.x || fy < r.y || fx >= r.right() || fy >= r.bottom() || b.rows <= 0 || b.cols <= 0) continue;
        const auto row = std::min<int64_t>(b.rows - 1, static_cast<int64_t>((fy - r.y) / r.h * static_cast<float>(b.rows)));
        const auto col = std::min<int64_t>(b.cols - 1, static_cast<int64_t>((fx - r.x) / r.w * static_cast<float>(b.cols)));
        const auto at = [&](size_t k) { return v.blocks[k].values[static_cast<size_t>(row * b.cols + col)]; };
        ImGui::SetTooltip("%s (%lld, %lld)\n%s %g · %s %g · %s %g", b.name.c_str(), static_cast<long long>(row),
                          static_cast<long long>(col), tr("correct"), static_cast<double>(at(0)), tr("with the bug"),
                          static_cast<double>(at(1)), tr("difference"), static_cast<double>(at(2)));
      }
    }
  }

  // counts per step, and beside them the hidden-weights report once there is one
  const bool report = !app.hidden_check.empty();
  ImGui::BeginChild("counts", {report ? w * 0.5f : 0, 0}, true);
  nan_table(app);
  ImGui::EndChild();
  if (report) {
    ImGui::SameLine();
    ImGui::BeginChild("check", {0, 0}, true);
    ImGui::TextColored(app.hidden_check_pass ? ImVec4(0.5f, 0.9f, 0.5f, 1) : ImVec4(1, 0.45f, 0.4f, 1),
                       "%s", app.hidden_check_pass ? tr("pass") : tr("fail"));
    ImGui::TextUnformatted(app.hidden_check.c_str());
    ImGui::EndChild();
  }
  end_panel();
}

}  // namespace attnsim::app
