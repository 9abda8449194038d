// Bug lab: the scenario's buggy run beside the correct run at the current step, a
// cell-level diff, NaN / -inf counts per step for both, "check that every hidden position
// has weight exactly 0", and "run to first NaN".
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/app.h"
#include "app/heat_view.h"
#include "app/i18n.h"
#include "app/step_view.h"

namespace attnsim::app {

namespace {

// bug - correct per cell; a cell where exactly one side is NaN is NaN (shown with the NaN
// mark), where both are equal (NaN too, or the same inf) 0.
std::vector<float> diff_atlas(const Display& bug, const Display& ok, int64_t* differing) {
  std::vector<float> out(bug.atlas.size(), 0.0f);
  *differing = 0;
  for (size_t i = 0; i < out.size() && i < ok.atlas.size(); ++i) {
    const float a = bug.atlas[i], b = ok.atlas[i];
    if (a == kEmptyCell) {
      out[i] = kEmptyCell;
      continue;
    }
    const bool same = (std::isnan(a) && std::isnan(b)) || a == b;
    if (same) continue;
    ++*differing;
    out[i] = std::isnan(a) || std::isnan(b) ? NAN : (std::isinf(a) || std::isinf(b) ? a : a - b);
  }
  return out;
}

}  // namespace

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
  ImGui::TableSetupColumn("NaN ok");
  ImGui::TableSetupColumn("NaN bug");
  ImGui::TableSetupColumn("-inf ok");
  ImGui::TableSetupColumn("-inf bug");
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
  tensor_toolbar(app, app.buglab_view);
  if (!d->run.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.40f, 1));
    ImGui::TextWrapped("%s: %s", tr("engine says"), d->run.error.c_str());
    ImGui::PopStyleColor();
  }

  // The heatmaps take the height their width allows; the NaN table keeps the rest, never
  // less than a few rows (it scrolls to the current step).
  const Step* ok = d->reference.trace.find(step->name);
  const float w = ImGui::GetContentRegionAvail().x;
  HeatViewSpec right, left;
  if (ok && ok->out.defined()) {
    left = step_view_spec(app, 1, *ok, false);
    left.id = "ok";
  }
  if (step->out.defined()) {
    right = step_view_spec(app, 0, *step, false);
    right.id = "bug";
    right.label_rows = !left.to;  // the rows line up with the correct run's labels
  }
  // Only the first view labels the rows, so it is wider by their width.
  const float label_w = left.to ? heat_view_label_width(left) : 0;
  const ImGuiStyle& style = ImGui::GetStyle();
  const float col_w = (w - style.ItemSpacing.x * 2 - label_w) / 3.0f;
  const float line = ImGui::GetTextLineHeightWithSpacing();
  // the table's header and three rows (the step before, this one, the one after)
  const float table_min = 4 * (ImGui::GetTextLineHeight() + style.CellPadding.y * 2) +
                          style.WindowPadding.y * 2 + style.ItemSpacing.y;
  const float room = ImGui::GetContentRegionAvail().y - line;  // minus the titles
  const float wanted = std::max(heat_view_height_for(left, col_w + label_w), heat_view_height_for(right, col_w));
  const float top_h = std::max(line * 4, std::min(wanted, room - table_min));
  left.size = {col_w + label_w, top_h};
  right.size = {col_w, top_h};

  ImGui::BeginGroup();
  ImGui::TextUnformatted(tr("correct"));
  if (left.to) draw_heat_view(app.buglab_view, left);
  else ImGui::Dummy({col_w, top_h});
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::TextColored({1.0f, 0.5f, 0.45f, 1}, "%s", tr("with the bug"));
  if (right.to) app.geometry_rows = draw_heat_view(app.buglab_view, right).block_rows;
  else ImGui::Dummy({col_w, top_h});
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  if (left.to && right.to && left.to->layout.atlas_cols == right.to->layout.atlas_cols &&
      left.to->layout.atlas_rows == right.to->layout.atlas_rows) {
    int64_t differing = 0;
    std::vector<float> diff = diff_atlas(*right.to, *left.to, &differing);
    const std::string key = "diff|" + step->name + "|" + std::to_string(app.batch);
    const Display& dd = app.displays.custom(key, d->generation, right.to->layout, std::move(diff),
                                            ColourMap::Diverging);
    if (differing == 0) ImGui::TextColored({0.5f, 0.9f, 0.5f, 1}, "%s: %s", tr("difference"), tr("identical"));
    else ImGui::Text("%s: %lld %s", tr("difference"), static_cast<long long>(differing), tr("cells differ"));
    HeatViewSpec diff_spec = right;
    diff_spec.to = &dd;
    diff_spec.id = "diff";
    diff_spec.row_sums = false;
    diff_spec.per_head_scale = false;
    draw_heat_view(app.buglab_view, diff_spec);
  } else {
    ImGui::TextUnformatted(tr("difference"));
    ImGui::Dummy({col_w, top_h});
  }
  ImGui::EndGroup();

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
