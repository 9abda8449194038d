// A heatmap view. See heat_view.h.
//
// Index
//   [SECTION] geometry      layout units -> screen pixels, zoom and pan
//   [SECTION] instances     what the shader draws for each transition kind
//   [SECTION] labels        tokens, head names, row sums, head ranges
//   [SECTION] hover         tooltip and highlights
//   [SECTION] legend
#include "app/heat_view.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "app/app.h"
#include "views/i18n.h"
#include "views/zoom.h"
#include "figure/palette.h"

namespace attnsim::app {

ImU32 head_colour(int64_t head, float alpha) {
  const figure::Color c = figure::category_colour(head);  // the figures' head colours
  return ImGui::GetColorU32(ImVec4(c.r, c.g, c.b, alpha));
}

namespace {

// [SECTION] geometry

struct Frame {
  ImVec2 origin;  // screen position of layout (0, 0)
  float scale;    // pixels per cell
  ImVec2 px(float x, float y) const { return {origin.x + x * scale, origin.y + y * scale}; }
};

void set_rect(float out[4], const Frame& f, float x, float y, float w, float h) {
  const ImVec2 p = f.px(x, y);
  out[0] = p.x;
  out[1] = p.y;
  out[2] = w * f.scale;
  out[3] = h * f.scale;
}

void set_texel(float out[4], float col, float row, float cols, float rows) {
  out[0] = col;
  out[1] = row;
  out[2] = cols;
  out[3] = rows;
}

HeatInstance block_instance(const Frame& f, const Block& b, float alpha = 1.0f) {
  HeatInstance in{};
  const auto cols = static_cast<float>(b.cols), rows = static_cast<float>(b.rows);
  set_rect(in.from, f, b.x, b.y, cols, rows);
  std::copy(in.from, in.from + 4, in.to);
  set_texel(in.texel_a, 0, static_cast<float>(b.atlas_row), cols, rows);
  std::copy(in.texel_a, in.texel_a + 4, in.texel_b);
  in.alpha = alpha;
  return in;
}

HeatmapDraw base_draw(const Display& d, const Frame& f, bool per_head = false) {
  HeatmapDraw hd;
  hd.colour_a = per_head ? d.colours_per_head.id() : d.colours.id();
  hd.cell_px = f.scale;
  return hd;
}

// Static blocks of one display, with one scale or each head its own.
void queue_static(ImDrawList* list, const Display& d, const Frame& f, bool per_head,
                  float opacity) {
  HeatmapDraw hd = base_draw(d, f, per_head);
  hd.opacity = opacity;
  for (const Block& b : d.layout.blocks) hd.instances.push_back(block_instance(f, b));
  heatmap_renderer().queue(list, std::move(hd));
}

// [SECTION] instances

// Rearrange / Copy: every matched run moves from its cell in `from` to its cell in `to`.
void queue_segments(ImDrawList* list, const HeatViewSpec& s, const Frame& f) {
  HeatmapDraw hd = base_draw(*s.from, f);
  hd.move = ease(s.t);
  hd.instances.reserve(s.segments->size());
  for (const Segment& g : *s.segments) {
    HeatInstance in{};
    set_rect(in.from, f, g.from.x, g.from.y, g.from.w, g.from.h);
    set_rect(in.to, f, g.to.x, g.to.y, g.to.w, g.to.h);
    set_texel(in.texel_a, static_cast<float>(g.from_col), static_cast<float>(g.from_row),
              static_cast<float>(g.length), 1);
    std::copy(in.texel_a, in.texel_a + 4, in.texel_b);
    in.alpha = 1;
    hd.instances.push_back(in);
  }
  heatmap_renderer().queue(list, std::move(hd));
}

// Elementwise: same cells, colours of `from` cross-fade into colours of `to`.
void queue_elementwise(ImDrawList* list, const HeatViewSpec& s, const Frame& f) {
  HeatmapDraw hd = base_draw(*s.from, f);
  // Same colour map: keep the source's scale, so a rescale (scores / sqrt(dk)) shows as
  // cells fading; the panel re-fits the scale when the step is reached.
  hd.colour_b = s.from->map == s.to->map ? s.to->colours_in_range(s.from->lo, s.from->hi)
                                         : s.to->colours.id();
  hd.mix = ease(s.t);
  for (size_t i = 0; i < s.to->layout.blocks.size(); ++i) {
    HeatInstance in = block_instance(f, s.to->layout.blocks[i]);
    const Block& fb = s.from->layout.blocks[i];
    set_texel(in.texel_a, 0, static_cast<float>(fb.atlas_row), static_cast<float>(fb.cols),
              static_cast<float>(fb.rows));
    hd.instances.push_back(in);
  }
  heatmap_renderer().queue(list, std::move(hd));
}

// Product: the result forms line by line (rows of q·kᵀ and alpha·v; columns of a linear
// layer, each column reading every input feature), over a faint copy of the input when it
// has the same layout.
void queue_product(ImDrawList* list, const HeatViewSpec& s, const Frame& f) {
  const bool ghost = s.from && s.from->layout.kind == s.to->layout.kind &&
                     s.from->layout.width == s.to->layout.width &&
                     s.from->layout.height == s.to->layout.height;
  if (ghost) queue_static(list, *s.from, f, false, 0.25f);
  HeatmapDraw hd = base_draw(*s.to, f);
  for (const Block& b : s.to->layout.blocks) {
    const int64_t lines = s.by_column ? b.cols : b.rows;
    for (int64_t i = 0; i < lines; ++i) {
      const float a = reveal(s.by_column ? 0 : i, s.by_column ? i : 0, b.rows, b.cols, s.t,
                             s.by_column);
      if (a <= 0.0f) continue;
      HeatInstance in{};
      const auto fi = static_cast<float>(i);
      if (s.by_column) {
        set_rect(in.from, f, b.x + fi, b.y, 1, static_cast<float>(b.rows));
        set_texel(in.texel_a, fi, static_cast<float>(b.atlas_row), 1, static_cast<float>(b.rows));
      } else {
        set_rect(in.from, f, b.x, b.y + fi, static_cast<float>(b.cols), 1);
        set_texel(in.texel_a, 0, static_cast<float>(b.atlas_row) + fi,
                  static_cast<float>(b.cols), 1);
      }
      std::copy(in.from, in.from + 4, in.to);
      std::copy(in.texel_a, in.texel_a + 4, in.texel_b);
      in.alpha = a;
      hd.instances.push_back(in);
    }
  }
  heatmap_renderer().queue(list, std::move(hd));

  // W_O and the projections: lines from every head range of the input into the column
  // that is forming now.
  if (ghost && s.by_column && s.heads > 0 && !s.to->layout.blocks.empty()) {
    const Block& b = s.to->layout.blocks[0];
    const float col = std::floor(s.t * static_cast<float>(b.cols) * 0.999f);
    const float w = static_cast<float>(b.cols) / static_cast<float>(s.heads);
    for (int64_t h = 0; h < s.heads; ++h) {
      const ImVec2 a = f.px(b.x + (static_cast<float>(h) + 0.5f) * w, b.y - 0.4f);
      const ImVec2 c = f.px(b.x + col + 0.5f, b.y);
      list->AddLine(a, c, head_colour(h), std::max(1.5f, f.scale * 0.08f));
    }
  }
}

// [SECTION] labels

void text_at(ImDrawList* list, ImVec2 p, ImU32 colour, const std::string& text) {
  list->AddText(p, colour, text.c_str());
}

// Row labels shrink to the row height (glyphs are a little shorter than the line, so
// neighbours keep a gap), down to 3/4 of the text size; below that they keep the full size
// on every k-th row.
struct RowLabels {
  float size;
  int64_t every;
};

RowLabels row_labels_for(float cell) {
  const float full = ImGui::GetFontSize();
  const float size = std::min(full, cell);
  if (size >= full * 0.75f) return {size, 1};
  return {full, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(full * 0.8f / std::max(cell, 0.01f))))};
}

// Every how many columns a key label fits: they are staggered on two lines, so one may
// spread over two labelled columns.
int64_t col_label_step(const std::vector<std::string>& labels, float cell) {
  float widest = 0;
  for (const auto& label : labels) widest = std::max(widest, ImGui::CalcTextSize(label.c_str()).x);
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil((widest + 4.0f) / (2.0f * std::max(cell, 0.01f)))));
}

// A head's name in the gap above its block, shrunk to the gap when a full line does not fit
// there, so it never covers a cell; "h2" when "head 2" is wider than the block.
void head_name(ImDrawList* list, const Block& b, const Frame& f, float line, float above) {
  char name[48];
  std::snprintf(name, sizeof name, "%s %lld", tr("head"), static_cast<long long>(b.head));
  const float room_w = static_cast<float>(b.cols) * f.scale + kBandGap * f.scale;
  const float room_h = b.y > 0.0f ? kBlockGap * f.scale : line;
  const float size = std::min(ImGui::GetFontSize(), room_h * 0.95f);
  ImFont* font = ImGui::GetFont();
  if (font->CalcTextSizeA(size, FLT_MAX, 0, name).x > room_w)
    std::snprintf(name, sizeof name, "h%lld", static_cast<long long>(b.head));
  const ImVec2 p = f.px(b.x, b.y);
  if (size < ImGui::GetFontSize() * 0.55f) {
    // too small to read in the gap: a tag inside the block's top-left corner
    const ImVec2 ts = ImGui::CalcTextSize(name);
    list->AddRectFilled(p, {p.x + ts.x + 6, p.y + ts.y}, IM_COL32(20, 22, 26, 220));
    list->AddText({p.x + 3, p.y}, head_colour(b.head), name);
    return;
  }
  const float y = b.y > 0.0f ? p.y - size - 1 : p.y - line * above;
  list->AddText(font, size, {p.x, y}, head_colour(b.head), name);
}

// Row sums sit in the gap right of each block: only when the gap holds "1.00" and a row
// holds a line.
bool sums_shown(const HeatViewSpec& s, float cell) {
  return s.row_sums && cell * kBlockGap >= ImGui::CalcTextSize("1.00").x + 4 &&
         cell >= ImGui::GetTextLineHeight() * 0.8f;
}

void draw_labels(ImDrawList* list, const HeatViewSpec& s, const Frame& f, float line) {
  const Layout& l = s.to->layout;
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const RowLabels rows = row_labels_for(f.scale);
  const int64_t col_every = s.col_labels ? col_label_step(*s.col_labels, f.scale) : 0;
  // right edge of the last key label on each of its two lines, across the top row of blocks
  float line_end[2] = {-FLT_MAX, -FLT_MAX};
  for (const Block& b : l.blocks) {
    // head name above the block
    if (b.head >= 0 && (l.kind != LayoutKind::HeadGrid || l.blocks.size() > 1)) {
      const bool under_keys = s.col_labels && b.y == 0.0f;
      head_name(list, b, f, line, under_keys ? 3.2f : 1.2f);
      list->AddRect(f.px(b.x, b.y), f.px(b.x + static_cast<float>(b.cols), b.y + static_cast<float>(b.rows)),
                    head_colour(b.head), 0, 0, std::max(1.0f, f.scale * 0.06f));
    }
    // row labels: tokens, else row numbers
    if (b.x == 0.0f && s.label_rows) {
      // with sparse labels the last one would crowd the next block
      const int64_t every = rows.every;
      for (int64_t r = 0; r < (every > 1 ? b.rows - every + 1 : b.rows); r += every) {
        std::string label;
        if (s.row_labels && r < static_cast<int64_t>(s.row_labels->size()))
          label = (*s.row_labels)[static_cast<size_t>(r)];
        else
          label = std::to_string(r);
        const float w = ImGui::GetFont()->CalcTextSizeA(rows.size, FLT_MAX, 0, label.c_str()).x;
        const ImVec2 p = f.px(b.x, b.y + static_cast<float>(r) + 0.5f);
        list->AddText(ImGui::GetFont(), rows.size, {p.x - w - 6, p.y - rows.size * 0.5f},
                      text, label.c_str());
      }
    }
    // key tokens above the columns of a score block, staggered on two lines; every
    // `col_every`-th column when the cells are too narrow for each token
    if (s.col_labels && b.y == 0.0f) {
      for (int64_t c = 0; c < b.cols && c < static_cast<int64_t>(s.col_labels->size()); c += col_every) {
        const std::string& label = (*s.col_labels)[static_cast<size_t>(c)];
        const float w = ImGui::CalcTextSize(label.c_str()).x;
        const ImVec2 p = f.px(b.x + static_cast<float>(c) + 0.5f, b.y);
        const int upper = (c / col_every) % 2 == 0 ? 1 : 0;
        // centred on its column, but not cut off by the view's left edge; a label pushed
        // right that way could reach the next one on its line, which then gives way
        const float x = std::max(p.x - w * 0.5f, list->GetClipRectMin().x);
        if (x < line_end[upper] + 4) continue;
        line_end[upper] = x + w;
        text_at(list, {x, p.y - line * (upper ? 2.0f : 1.05f) - 2}, text, label);
      }
    }
    // row sums of a probability block
    if (sums_shown(s, f.scale)) {
      const ImVec2 h = f.px(b.x + static_cast<float>(b.cols) + 0.1f, b.y);
      text_at(list, {h.x, h.y - line * 1.1f}, dim, "Σ");
      for (int64_t r = 0; r < b.rows; ++r) {
        double sum = 0;
        for (int64_t c = 0; c < b.cols; ++c)
          sum += s.to->atlas[static_cast<size_t>((b.atlas_row + r) * l.atlas_cols + c)];
        char buf[32];
        std::snprintf(buf, sizeof buf, std::isnan(sum) ? "NaN" : "%.2f", sum);
        const ImVec2 p = f.px(b.x + static_cast<float>(b.cols) + 0.1f, b.y + static_cast<float>(r) + 0.5f);
        text_at(list, {p.x, p.y - line * 0.5f}, std::isnan(sum) ? IM_COL32(240, 0, 215, 255) : dim, buf);
      }
    }
  }
  // head ranges over a d-wide matrix (concat: the heads side by side again)
  if (s.heads > 0 && l.kind == LayoutKind::Matrix && !l.blocks.empty() &&
      l.blocks[0].cols % s.heads == 0 && l.blocks[0].cols > s.heads) {
    const Block& b = l.blocks[0];
    const float w = static_cast<float>(b.cols / s.heads);
    for (int64_t h = 0; h < s.heads; ++h) {
      const ImVec2 a = f.px(b.x + static_cast<float>(h) * w, b.y - 0.35f);
      const ImVec2 c = f.px(b.x + static_cast<float>(h + 1) * w, b.y - 0.1f);
      list->AddRectFilled({a.x + 1, a.y}, {c.x - 1, c.y}, head_colour(h));
    }
  }
}

// Room around the cells: row labels on the left, key labels and head names on top, row
// sums on the right.
struct Margins {
  float left = 0, top = 0, right = 0;
};

Margins margins(const HeatViewSpec& s) {
  Margins m;
  const float line = ImGui::GetTextLineHeight();
  if (s.label_rows && s.row_labels) {
    m.left = ImGui::CalcTextSize("00000").x;
    if (s.row_labels)
      for (const auto& label : *s.row_labels) m.left = std::max(m.left, ImGui::CalcTextSize(label.c_str()).x);
    m.left += 10;
  }
  m.top = line * (s.col_labels ? 3.3f : 1.6f);
  m.right = 6.0f;
  return m;
}

// Pixels per cell that fit the layout's `width` x `height` cells into `size`, with room for
// row sums on the right only when the cells come out large enough to show them.
float fit_cells(const HeatViewSpec& s, ImVec2 size, float width, float height, Margins* m) {
  *m = margins(s);
  auto fit = [&] {
    return std::max(0.01f, std::min((size.x - m->left - m->right) / width, (size.y - m->top - 4) / height));
  };
  if (!sums_shown(s, fit())) return fit();
  m->right = ImGui::CalcTextSize("1.00 ").x;
  return fit();
}

// [SECTION] hover

std::string format_value(float v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-inf" : "+inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5g", static_cast<double>(v));
  return buf;
}

void outline(ImDrawList* list, const Frame& f, const Rect& r, ImU32 colour) {
  list->AddRect(f.px(r.x, r.y), f.px(r.x + r.w, r.y + r.h), colour, 0, 0,
                std::max(2.0f, f.scale * 0.12f));
}

}  // namespace

HeatViewResult draw_heat_view(ViewState& view, const HeatViewSpec& s) {
  HeatViewResult result;
  if (!s.to) return result;
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  ImVec2 size = s.size;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (size.x <= 0) size.x = avail.x;
  if (size.y <= 0) size.y = avail.y;
  size.x = std::max(size.x, 40.0f);
  size.y = std::max(size.y, 40.0f);
  ImGui::InvisibleButton(s.id, size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonMiddle);
  const bool hovered = ImGui::IsItemHovered();
  ImGuiIO& io = ImGui::GetIO();

  // [SECTION] geometry: fit both layouts of a moving transition, then zoom and pan.
  const Layout& l = s.to->layout;
  const bool moving = s.t < 1.0f && s.from && s.segments &&
                      (s.kind == TransitionKind::Rearrange || s.kind == TransitionKind::Copy);
  float width = std::max(l.width, 1.0f), height = std::max(l.height, 1.0f);
  if (moving) {
    width = std::max(width, s.from->layout.width);
    height = std::max(height, s.from->layout.height);
  }
  Margins m;
  const float fit = fit_cells(s, size, width, height, &m);
  if (hovered && io.MouseWheel != 0.0f)
    zoom_about(view.zoom, view.pan.x, view.pan.y, fit, std::pow(1.15f, io.MouseWheel),
               io.MousePos.x - pos.x - m.left, io.MousePos.y - pos.y - m.top);
  if (ImGui::IsItemActive() && (ImGui::IsMouseDragging(ImGuiMouseButton_Left) ||
                                ImGui::IsMouseDragging(ImGuiMouseButton_Middle))) {
    view.pan.x += io.MouseDelta.x;
    view.pan.y += io.MouseDelta.y;
  }
  if (view.zoom <= 1.0f) view.pan = {0, 0};
  Frame f{{pos.x + m.left + view.pan.x, pos.y + m.top + view.pan.y}, fit * view.zoom};

  ImDrawList* list = ImGui::GetWindowDrawList();
  list->PushClipRect(pos, {pos.x + size.x, pos.y + size.y}, true);

  // [SECTION] instances
  const float t = s.t;
  if (t >= 1.0f || !s.from) {
    queue_static(list, *s.to, f, s.per_head_scale, t < 1.0f ? ease(t) : 1.0f);
  } else if (moving) {
    queue_segments(list, s, f);
  } else if (s.kind == TransitionKind::Elementwise &&
             s.from->layout.blocks.size() == l.blocks.size()) {
    queue_elementwise(list, s, f);
  } else if (s.kind == TransitionKind::Product) {
    queue_product(list, s, f);
  } else {
    queue_static(list, *s.to, f, s.per_head_scale, ease(t));
  }
  if (!moving) draw_labels(list, s, f, ImGui::GetTextLineHeight());

  for (const Block& b : l.blocks)
    for (int64_t r = 0; r < b.rows; ++r) {
      const ImVec2 p = f.px(b.x, b.y + static_cast<float>(r));
      result.block_rows.push_back({p.x, p.y, static_cast<float>(b.cols) * f.scale, f.scale});
    }

  // [SECTION] hover
  if (!moving)
    for (int64_t m : s.marked_storage) {
      const int64_t e = l.element_at_storage(m);
      if (e >= 0) outline(list, f, l.rect(e), IM_COL32(255, 140, 0, 255));
    }
  if (s.highlight_storage >= 0 && !moving) {
    const int64_t e = l.element_at_storage(s.highlight_storage);
    if (e >= 0) outline(list, f, l.rect(e), IM_COL32(255, 220, 0, 255));
  }
  if (hovered && !moving) {
    const float lx = (io.MousePos.x - f.origin.x) / f.scale;
    const float ly = (io.MousePos.y - f.origin.y) / f.scale;
    const int64_t e = l.hit(lx, ly);
    if (e >= 0) {
      result.hovered = e;
      outline(list, f, l.rect(e), IM_COL32(255, 255, 255, 255));
      const Dims idx = l.index_of(e);
      // [batch, i, j, ...] for a trace step; [i, j, ...] for a computed display
      std::string index = s.to->strides.empty() ? "[" : "[" + std::to_string(s.to->batch);
      for (size_t k = 0; k < idx.size(); ++k)
        index += (k == 0 && s.to->strides.empty() ? "" : ", ") + std::to_string(idx[k]);
      index += "]";
      ImGui::BeginTooltip();
      ImGui::Text("%s %s", s.to->step.c_str(), index.c_str());
      ImGui::Text("%s: %s", tr("value"), format_value(s.to->value(e)).c_str());
      ImGui::Text("%s: %lld", tr("storage offset"), static_cast<long long>(l.storage[static_cast<size_t>(e)]));
      if (s.to->strides.size() == idx.size() + 1) {
        // the stride rule of tensor.h, with this element's numbers
        std::string rule = "= " + std::to_string(s.to->offset) + " + " +
                           std::to_string(s.to->batch) + "·" + std::to_string(s.to->strides[0]);
        for (size_t k = 0; k < idx.size(); ++k)
          rule += " + " + std::to_string(idx[k]) + "·" + std::to_string(s.to->strides[k + 1]);
        ImGui::TextDisabled("%s", rule.c_str());
      }
      if (s.row_labels && !idx.empty()) {
        const int64_t row = idx.size() == 3 && l.kind == LayoutKind::Bands ? idx[0] : idx[idx.size() - 2];
        if (row < static_cast<int64_t>(s.row_labels->size()))
          ImGui::TextDisabled("%s", (*s.row_labels)[static_cast<size_t>(row)].c_str());
      }
      ImGui::EndTooltip();
    }
  }
  list->PopClipRect();
  return result;
}

// [SECTION] legend

void draw_legend(const Display& d) {
  // A tiny display of its own: a 24-step ramp of the scale, then NaN, -inf, +inf. The
  // swatches go through the same shader as the heatmaps, so they match exactly.
  // The ramp runs between the ends the cells are coloured by (colormap_ends: -m .. m for
  // signed values), as the figures' legends do.
  static std::unique_ptr<Display> legend;
  constexpr int kRamp = 24;
  const auto [lo_end, hi_end] = figure::colormap_ends(d.map, d.lo, d.hi);
  if (!legend || legend->lo != lo_end || legend->hi != hi_end || legend->map != d.map) {
    legend = std::make_unique<Display>();
    std::vector<float>& values = legend->atlas;
    values.assign(kRamp + 3, 0);
    for (int i = 0; i < kRamp; ++i)
      values[static_cast<size_t>(i)] = lo_end + (hi_end - lo_end) * static_cast<float>(i) / (kRamp - 1);
    if (d.map == figure::ColorMapId::Mask) {
      values[0] = 0;
      values[kRamp - 1] = 1;
    }
    values[kRamp] = std::nanf("");
    values[kRamp + 1] = -INFINITY;
    values[kRamp + 2] = INFINITY;
    legend->map = d.map;
    legend->lo = lo_end;
    legend->hi = hi_end;
    legend->texture = AtlasTexture(values, kRamp + 3, 1);
    legend->colours = heatmap_renderer().colourize(legend->texture, kRamp + 3, 1, d.map,
                                                   {{0, 1, lo_end, hi_end}});
  }
  const float h = ImGui::GetTextLineHeight();
  ImDrawList* list = ImGui::GetWindowDrawList();
  HeatmapDraw hd;
  hd.colour_a = legend->colours.id();
  auto swatch = [&](float col, float cols, ImVec2 p, float w) {
    HeatInstance in{};
    in.from[0] = in.to[0] = p.x;
    in.from[1] = in.to[1] = p.y;
    in.from[2] = in.to[2] = w;
    in.from[3] = in.to[3] = h;
    set_texel(in.texel_a, col, 0, cols, 1);
    std::copy(in.texel_a, in.texel_a + 4, in.texel_b);
    in.alpha = 1;
    hd.instances.push_back(in);
  };
  char lo[32], hi[32];
  std::snprintf(lo, sizeof lo, "%.3g", static_cast<double>(lo_end));
  std::snprintf(hi, sizeof hi, "%.3g", static_cast<double>(hi_end));
  if (d.map == figure::ColorMapId::Mask) {
    ImGui::TextUnformatted(tr("visible"));
    ImGui::SameLine();
    swatch(0, 1, ImGui::GetCursorScreenPos(), h * 1.5f);
    ImGui::Dummy({h * 1.5f, h});
    ImGui::SameLine();
    ImGui::TextUnformatted(tr("hidden"));
    ImGui::SameLine();
    swatch(kRamp - 1, 1, ImGui::GetCursorScreenPos(), h * 1.5f);
    ImGui::Dummy({h * 1.5f, h});
  } else {
    ImGui::TextUnformatted(lo);
    ImGui::SameLine();
    swatch(0, kRamp, ImGui::GetCursorScreenPos(), h * 8);
    ImGui::Dummy({h * 8, h});
    ImGui::SameLine();
    ImGui::TextUnformatted(hi);
  }
  const char* names[3] = {"NaN", "-inf", "+inf"};
  for (int i = 0; i < 3; ++i) {
    ImGui::SameLine(0, h);
    swatch(static_cast<float>(kRamp + i), 1, ImGui::GetCursorScreenPos(), h * 1.6f);
    ImGui::Dummy({h * 1.6f, h});
    ImGui::SameLine();
    ImGui::TextUnformatted(names[i]);
  }
  heatmap_renderer().queue(list, std::move(hd));
}

}  // namespace attnsim::app
