// Memory panel: the current step's storage as a strip of cells in storage order.
//   - the logical walk: a line through the cells in logical (C) order, so a view with new
//     strides visibly walks the same strip differently
//   - hovering a cell here highlights the logical element in the tensor panel and back
//   - a copy (contiguous) shows the source strip and the new strip, the values moving
//     between them, and the bytes copied
//   - "view without contiguous" asks the engine for the view and shows its real error
#include <algorithm>
#include <cstdio>

#include "app/app.h"
#include "app/heat_view.h"
#include "app/i18n.h"
#include "engine/cost.h"
#include "engine/error.h"

namespace attnsim::app {

namespace {

// The combined display (source strip above the new strip) of a copy step.
const Display& copy_display(App& app, const Step& src, const Step& dst, int64_t wrap,
                            const Display& a, const Display& b) {
  const Layout both = stack_layouts(a.layout, b.layout, 2.0f);
  // the atlases may differ in width; re-pack row by row
  std::vector<float> packed(static_cast<size_t>(both.atlas_rows * both.atlas_cols), 0.0f);
  for (int64_t r = 0; r < a.layout.atlas_rows; ++r)
    std::copy_n(a.atlas.begin() + r * a.layout.atlas_cols, a.layout.atlas_cols,
                packed.begin() + r * both.atlas_cols);
  for (int64_t r = 0; r < b.layout.atlas_rows; ++r)
    std::copy_n(b.atlas.begin() + r * b.layout.atlas_cols, b.layout.atlas_cols,
                packed.begin() + (a.layout.atlas_rows + r) * both.atlas_cols);
  const std::string key = "copy|" + src.name + ">" + dst.name + "|" + std::to_string(app.batch) +
                          "|" + std::to_string(wrap);
  return app.displays.custom(key, app.data()->generation, both, std::move(packed), a.map);
}

void walk_line(ImDrawList* list, const HeatViewResult& r, const Layout& l, int64_t first,
               int64_t count) {
  // The strip's screen geometry: block rows are reported top to bottom.
  if (r.block_rows.empty() || l.blocks.empty()) return;
  const Block& b = l.blocks[static_cast<size_t>(l.places[static_cast<size_t>(first)].block)];
  const float cell = r.block_rows[0].w;  // (x, y, width, height): a row is one cell high
  const ImVec2 origin{r.block_rows[static_cast<size_t>(b.atlas_row)].x - b.x * cell,
                      r.block_rows[static_cast<size_t>(b.atlas_row)].y - b.y * cell};
  ImVec2 prev{};
  const int64_t n = std::min<int64_t>(count, 400);
  for (int64_t e = 0; e < n; ++e) {
    const Rect c = l.rect(first + e);
    const ImVec2 p{origin.x + (c.x + 0.5f) * cell, origin.y + (c.y + 0.5f) * cell};
    if (e > 0) {
      list->AddLine(prev, p, IM_COL32(20, 20, 20, 200), 3.0f);
      list->AddLine(prev, p, IM_COL32(255, 255, 255, 230), 1.2f);
    }
    prev = p;
  }
}

void view_without_contiguous(App& app) {
  if (ImGui::Button(tr("Try view(B, T, d) without contiguous()"))) memory_try_view(app);
  if (!app.view_error.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s:", tr("engine says"));
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.40f, 1));
    ImGui::TextWrapped("%s", app.view_error.c_str());
    ImGui::PopStyleColor();
  }
}

}  // namespace

void memory_try_view(App& app) {
  const RunData* d = app.data();
  const Step* t = d ? d->run.trace.find("ctx_transposed") : nullptr;
  if (!t || !t->out.defined()) return;
  const Dims target{d->config.batch, d->config.tq, d->config.d_model};
  try {
    const Tensor v = t->out.view(target);  // view: the engine decides whether strides allow it
    app.view_error = std::string(tr("view succeeded")) + ": " + format_dims(v.shape());
  } catch (const Error& e) {
    app.view_error = e.what();
  }
}

void panel_memory(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "memory", tr("Memory"), rect)) return end_panel();
  const Step* step = app.current_step();
  const RunData* d = app.data();
  if (!step || !d || !step->out.defined()) {
    if (d) view_without_contiguous(app);
    return end_panel();
  }
  const Tensor& out = step->out;
  const int64_t n = numel_of(Dims(out.shape().begin() + 1, out.shape().end()));
  // One wrap width per storage size, a multiple of d_model where it divides, so q_proj,
  // q_view and q_heads (one storage) wrap identically and a strip row is whole tokens.
  int64_t wrap = strip_wrap_for(std::max<int64_t>(n, 1), rect.z / std::max(rect.w * 0.55f, 1.0f));
  const int64_t unit = n % d->config.d_model == 0 ? d->config.d_model : out.shape().back();
  if (unit > 0 && unit <= wrap) wrap = wrap / unit * unit;
  const Display& strip = app.displays.get(d->generation, 0, *step, app.batch, LayoutKind::Strip, wrap);

  // header: what this step did to memory
  std::string what = std::string(tr("storage")) + " #" + std::to_string(step->storage_id) + "  " +
                     tr("strides") + " " + format_dims(out.strides()) + "  " +
                     (out.is_contiguous() ? tr("contiguous") : tr("not contiguous"));
  ImGui::TextUnformatted(what.c_str());
  ImGui::SameLine();
  if (step->kind == StepKind::View)
    ImGui::TextColored({0.30f, 0.65f, 0.95f, 1}, "%s (0 %s)", tr("same storage, new strides"), tr("bytes"));
  else if (step->kind == StepKind::Copy)
    ImGui::TextColored({0.95f, 0.55f, 0.15f, 1}, "%s: %s %s", tr("new storage"),
                       human_bytes(step->copied_bytes).c_str(), tr("copied"));
  else if (step->new_bytes > 0)
    ImGui::TextDisabled("%s: %s", tr("new storage"), human_bytes(step->new_bytes).c_str());
  view_without_contiguous(app);

  HeatViewSpec spec;
  spec.id = "memory";
  spec.to = &strip;
  const Step* src = step->inputs.empty() ? nullptr : d->run.trace.find(step->inputs[0]);
  const bool copy = step->kind == StepKind::Copy && src && src->out.defined();
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (copy) {
    // Source strip on top, the copy's new strip below; values move by logical index.
    const Display& a = app.displays.get(d->generation, 0, *src, app.batch, LayoutKind::Strip, wrap);
    const Display& both = copy_display(app, *src, *step, wrap, a, strip);
    spec.to = &both;
    const int64_t na = a.layout.numel();
    if (app.playback.animating() && app.playback.step == app.step_index(step->name)) {
      // match_pairs over the stacked layout: element e of the source -> element na + e
      static std::vector<Segment> segments;
      static const Display* built_for = nullptr;
      if (built_for != &both) {
        for (int64_t e = 0; e < std::min(na, strip.layout.numel()); ++e) pairs.push_back({na + e, e});
        segments = match_pairs(both.layout, both.layout, pairs);
        built_for = &both;
      }
      spec.from = &both;
      spec.kind = TransitionKind::Copy;
      spec.segments = &segments;
      spec.t = app.playback.t;
    }
  }
  if (app.hover.step == step->name) spec.highlight_storage = app.hover.storage;
  const HeatViewResult r = draw_heat_view(app.memory_view, spec);
  if (copy && spec.to->layout.blocks.size() == 2 && !r.block_rows.empty() && spec.t >= 1.0f) {
    // name the two strips: where the values were, and the storage the copy made
    const auto second = static_cast<size_t>(spec.to->layout.blocks[0].rows);
    const float line = ImGui::GetTextLineHeight();
    const std::string top = std::string(tr("storage")) + " #" + std::to_string(src->storage_id) +
                            " (" + src->name + ")";
    const std::string bottom = std::string(tr("new storage")) + " #" +
                               std::to_string(step->storage_id) + ": " +
                               human_bytes(step->copied_bytes) + " " + tr("copied");
    ImDrawList* list = ImGui::GetWindowDrawList();
    list->AddText({r.block_rows[0].x, r.block_rows[0].y - line * 1.1f},
                  ImGui::GetColorU32(ImGuiCol_Text), top.c_str());
    if (second < r.block_rows.size())
      list->AddText({r.block_rows[second].x, r.block_rows[second].y - line * 1.1f},
                    IM_COL32(242, 140, 38, 255), bottom.c_str());
  }
  // The walk only says something when the strides jump (a transposed view).
  if (!copy && !out.is_contiguous()) walk_line(ImGui::GetWindowDrawList(), r, strip.layout, 0, strip.layout.numel());
  if (r.hovered >= 0 && !copy) {
    app.next_hover.step = step->name;
    app.next_hover.storage = strip.layout.storage[static_cast<size_t>(r.hovered)];
    app.next_hover.element = r.hovered;
  }
  end_panel();
}

}  // namespace attnsim::app
