// Tensor panel: the current step as heatmaps (one per head for 4-D tensors), animated from
// the step it reads; batch selector, colour scale, zoom and pan, legend, hover details.
#include <cstdio>

#include "app/app.h"
#include "app/heat_view.h"
#include "views/i18n.h"
#include "app/step_view.h"

namespace attnsim::app {

namespace {

void step_header(const Step& s) {
  ImGui::Text("%s", s.name.c_str());
  ImGui::SameLine();
  std::string info = s.op.empty() ? "" : s.op + "  ";
  if (s.out.defined()) {
    info += tr("shape") + std::string(" ") + format_dims(s.out.shape()) + "  " + tr("strides") +
            " " + format_dims(s.out.strides()) + "  offset " + std::to_string(s.out.offset()) +
            "  " + tr("storage") + " #" + std::to_string(s.storage_id) + "  " +
            (s.out.is_contiguous() ? tr("contiguous") : tr("not contiguous"));
  }
  ImGui::TextDisabled("%s", info.c_str());
  if (!s.note.empty()) ImGui::TextWrapped("%s", s.note.c_str());
}

}  // namespace

// Batch selector and colour-scale choice, shared with the bug lab.
void tensor_toolbar(App& app, ViewState& view) {
  const RunData* d = app.data();
  if (d && d->config.batch > 1) {
    int b = static_cast<int>(app.batch);
    ImGui::SetNextItemWidth(120);
    if (ImGui::SliderInt(tr("Batch"), &b, 0, static_cast<int>(d->config.batch - 1))) app.batch = b;
    ImGui::SameLine();
  }
  ImGui::TextUnformatted(tr("Colour scale"));
  ImGui::SameLine();
  if (ImGui::RadioButton(tr("shared"), !app.per_head_scale)) app.per_head_scale = false;
  ImGui::SameLine();
  if (ImGui::RadioButton(tr("per head"), app.per_head_scale)) app.per_head_scale = true;
  ImGui::SameLine();
  if (ImGui::Button(tr("Fit"))) view = {};
  ImGui::SameLine();
  ImGui::TextDisabled("(%s)", tr("wheel: zoom, drag: pan"));
}

void panel_tensor(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "tensor", tr("Tensor"), rect)) return end_panel();
  const Step* step = app.current_step();
  if (!step) {
    ImGui::TextUnformatted(app.session.error().empty() ? tr("Computing") : app.session.error().c_str());
    return end_panel();
  }
  step_header(*step);
  tensor_toolbar(app, app.tensor_view);
  if (!step->out.defined()) {
    ImGui::TextDisabled("%s", tr("skipped in this configuration"));
    return end_panel();
  }
  HeatViewSpec spec = step_view_spec(app, 0, *step, true);
  spec.id = "tensor";
  if (app.hover.step == step->name) spec.highlight_storage = app.hover.storage;
  // Edited input cells live in the query tensor (self-attention: key and value too).
  if (step->kind == StepKind::Input && (step->name == "query" || app.data()->config.self_attention))
    for (const auto& [index, value] : app.session.edits())
      if (index.size() == 3 && index[0] == app.batch && index[1] < step->out.size(1) &&
          index[2] < step->out.size(2))
        spec.marked_storage.push_back(step->out.storage_index(index));
  const float legend_h = ImGui::GetFrameHeightWithSpacing() + 4;
  spec.size = {0, ImGui::GetContentRegionAvail().y - legend_h};
  const HeatViewResult r = draw_heat_view(app.tensor_view, spec);
  app.geometry_rows = r.block_rows;
  if (r.hovered >= 0) {
    app.next_hover.step = step->name;
    app.next_hover.storage = spec.to->layout.storage[static_cast<size_t>(r.hovered)];
  }
  // mid-way through an elementwise transition the cells are on the source's scale
  const bool source_scale = spec.from && spec.t < 1.0f && spec.kind == TransitionKind::Elementwise &&
                            spec.from->map == spec.to->map;
  draw_legend(source_scale ? *spec.from : *spec.to);
  end_panel();
}

}  // namespace attnsim::app
