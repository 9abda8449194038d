// Memory panel: the current step's storage as a strip of cells in storage order, with the walk
// in logical order. The picture is the memory slide's figure (memory_slides.h memory_view:
// figure/memory_figure.h add_memory_strips), sized to the panel and drawn through the ImGui
// sink (figure_imgui.h), so the panel and `--export --slide --panel memory` draw one figure:
//   - a view walks the same strip in a new order; a copy (contiguous) shows the source strip
//     above the new one, the new one filling in while the copy plays
//   - hovering a cell here highlights the logical element in the tensor panel and back (the
//     cell found through the figure's own layout, its outline a figure box too)
//   - "view without contiguous" (a widget) asks the engine for the view; its answer is the
//     figure's detail line
#include <algorithm>
#include <cstdio>

#include "app/app.h"
#include "app/figure_imgui.h"
#include "views/i18n.h"
#include "views/memory_slides.h"
#include "engine/error.h"
#include "figure/palette.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

namespace {

// The figure for what the panel shows, rebuilt only when one of its inputs changes.
struct MemoryCache {
  std::string key;
  MemoryView view;
  std::string error;
};

MemoryCache& cache() {
  static MemoryCache c;
  return c;
}

void view_without_contiguous(App& app) {
  if (ImGui::Button(tr("Try view(B, T, d) without contiguous()"))) memory_try_view(app);
}

// The strip cell under figure point (x, y): strip index and cell, or false.
bool cell_at(const fig::MemoryLayout& l, float x, float y, size_t* strip, int64_t* cell) {
  for (size_t i = 0; i < l.strips.size(); ++i) {
    const fig::Rect& r = l.strips[i];
    if (x < r.x || y < r.y || x >= r.right() || y >= r.bottom() || l.wrap < 1) continue;
    const float w = r.w / static_cast<float>(l.wrap);
    const int64_t c = static_cast<int64_t>((y - r.y) / w) * l.wrap + std::min(l.wrap - 1, static_cast<int64_t>((x - r.x) / w));
    if (c >= l.cells[i]) return false;
    *strip = i;
    *cell = c;
    return true;
  }
  return false;
}

}  // namespace

void memory_try_view(App& app) {
  const RunData* d = app.data();
  const Step* t = d ? d->run.trace.find("ctx_transposed") : nullptr;
  if (!t || !t->out.defined()) return;
  app.view_error = try_view_answer(*d, t->out, panel_lang());
}

void panel_memory(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "memory", tr("Memory"), rect)) return end_panel();
  const Step* step = app.current_step();
  const RunData* d = app.data();
  if (d) view_without_contiguous(app);
  if (!step || !d || !step->out.defined()) {
    if (!app.view_error.empty()) ImGui::TextWrapped("%s", app.view_error.c_str());
    return end_panel();
  }
  const Step* src = step->inputs.empty() ? nullptr : d->run.trace.find(step->inputs[0]);
  const bool copy = step->kind == StepKind::Copy && src && src->out.defined();
  // A copy while the step plays: the new strip fills in.
  const float arrived = copy && app.playback.animating() && app.playback.step == app.step_index(step->name)
                            ? app.playback.t
                            : 1.0f;

  // The scale that makes the figure's 28-unit labels the UI's text size, smaller when the
  // panel is short (a headline, the detail, up to two strips and their names).
  const ImVec2 room = ImGui::GetContentRegionAvail();
  if (room.x < 8 || room.y < 8) return end_panel();
  const float fit = std::max(0.2f, std::min(ImGui::GetFontSize() / fig::kLabelMin, room.y / 420.0f));
  const lessons::Lang lang = panel_lang();
  char key[512];
  std::snprintf(key, sizeof key, "%llu|%s|%lld|%.0fx%.0f|%.3f|%s|%d|", static_cast<unsigned long long>(d->generation),
                step->name.c_str(), static_cast<long long>(app.batch), room.x, room.y, arrived, panel_theme().name.c_str(),
                static_cast<int>(lang));
  MemoryCache& c = cache();
  if (c.key != key + app.view_error) {
    c = MemoryCache{key + app.view_error, {}, ""};
    MemoryViewSpec spec;
    spec.run = d;
    spec.step = step;
    spec.batch = app.batch;
    spec.width = room.x / fit;
    spec.height = room.y / fit;
    spec.lang = lang;
    spec.theme = panel_theme().name;
    spec.answer = app.view_error;
    spec.arrived = arrived;
    try {
      c.view = memory_view(spec);
      want_figure_glyphs(c.view.figure);
    } catch (const Error& e) {
      c.error = e.what();
    }
  }
  if (!c.error.empty()) {
    ImGui::TextWrapped("%s", c.error.c_str());
    return end_panel();
  }
  const fig::MemoryLayout& l = c.view.layout;
  // Too short a panel for its text: drawn readable, and the panel scrolls (figure_imgui.h).
  const float scale = readable_scale(c.view.figure, fit);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  draw_figure(dl, c.view.figure, origin, scale, Backdrop::Window);
  if (!l.strips.empty()) {
    const fig::Rect& r = l.strips.back();
    app.figure_rects["memory_strip"] = {origin.x + r.x * scale, origin.y + r.y * scale, r.w * scale, r.h * scale};
  }
  // The element hovered in the tensor panel: its cell of this step's strip (the last one),
  // outlined by a one-box figure over the strip.
  if (app.hover.step == step->name && app.hover.storage >= 0 && !l.strips.empty() && l.wrap > 0) {
    const int64_t cell = app.hover.storage - l.base.back();
    if (cell >= 0 && cell < l.cells.back()) {
      const fig::Rect& r = l.strips.back();
      const float w = r.w / static_cast<float>(l.wrap);
      fig::Figure mark;
      mark.width = c.view.figure.width;
      mark.height = c.view.figure.height;
      mark.box({r.x + w * static_cast<float>(cell % l.wrap), r.y + w * static_cast<float>(cell / l.wrap), w, w},
               {0, 0, 0, 0}, panel_theme().highlight, std::max(2.0f, 2.5f / scale));
      draw_figure(dl, mark, origin, scale, Backdrop::Window);
    }
  }
  ImGui::InvisibleButton("##memory-figure", {std::max(room.x, c.view.figure.width * scale),
                                              std::max(room.y, c.view.figure.height * scale)});
  size_t strip = 0;
  int64_t cell = 0;
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (cell_at(l, (m.x - origin.x) / scale, (m.y - origin.y) / scale, &strip, &cell)) {
      const Step& s = copy && strip == 0 ? *src : *step;
      const int64_t storage = l.base[strip] + cell;
      if (&s == step) {
        app.next_hover.step = step->name;
        app.next_hover.storage = storage;
      }
      // The logical element that reads this cell: its place in the walk (strip_cells).
      const fig::StripCells sc = fig::strip_cells(s.out, app.batch);
      const auto at = std::find(sc.walk.begin(), sc.walk.end(), cell);
      char element[64] = "-";
      if (at != sc.walk.end()) std::snprintf(element, sizeof element, "%lld", static_cast<long long>(at - sc.walk.begin()));
      ImGui::SetTooltip("%s #%lld [%lld] = %.4g\n%s: %s", tr("storage"), static_cast<long long>(s.storage_id),
                        static_cast<long long>(storage), static_cast<double>(sc.values[static_cast<size_t>(cell)]),
                        tr("logical element"), element);
    }
  }
  end_panel();
}

}  // namespace attnsim::app
