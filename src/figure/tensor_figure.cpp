// Heatmap figures of engine tensors. See tensor_figure.h.
#include "figure/tensor_figure.h"

#include <algorithm>
#include <cmath>

#include "figure/text_metrics.h"

namespace attnsim::figure {

ColorMapId map_for_step(const std::string& step) {
  if (step == "alpha" || step == "alpha_dropped") return ColorMapId::Viridis;
  if (step == "mask") return ColorMapId::Mask;
  return ColorMapId::Diverging;
}

bool is_bands_step(const std::string& step) {
  return step == "q_view" || step == "k_view" || step == "v_view" || step == "ctx_transposed" ||
         step == "ctx_contiguous";
}

std::vector<Block> tensor_blocks(const std::string& step, const Tensor& t, int64_t batch,
                                 const std::string& head_word) {
  std::vector<Block> out;
  const Dims& s = t.shape();
  if (t.dim() < 2 || batch < 0 || batch >= s[0]) return out;
  const ColorMapId map = map_for_step(step);
  auto value = [&](const Dims& idx) {
    float v = t.at(idx);
    return v;
  };
  if (t.dim() == 3) {
    Block b{"", s[1], s[2], {}, map};
    for (int64_t i = 0; i < s[1]; ++i)
      for (int64_t j = 0; j < s[2]; ++j) b.values.push_back(value({batch, i, j}));
    out.push_back(std::move(b));
  } else if (t.dim() == 4 && is_bands_step(step)) {
    // (B, T, h, dk): one T x (h·dk) matrix, token t's head i at columns i·dk .. i·dk + dk - 1
    // (the caller brackets the heads: AxisLabels::col_groups)
    Block b{"", s[1], s[2] * s[3], {}, map};
    for (int64_t i = 0; i < s[1]; ++i)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t j = 0; j < s[3]; ++j) b.values.push_back(value({batch, i, h, j}));
    out.push_back(std::move(b));
  } else if (t.dim() == 5) {
    // (B, g, h/g, T, dk), the grouped view: one block per query head, named with the K/V
    // head it reads (the blocks of one group hold the same numbers: stride 0)
    for (int64_t j = 0; j < s[1]; ++j)
      for (int64_t q = 0; q < s[2]; ++q) {
        Block b{head_word + std::to_string(j * s[2] + q) + " · K/V " + std::to_string(j), s[3], s[4], {}, map};
        for (int64_t i = 0; i < s[3]; ++i)
          for (int64_t k = 0; k < s[4]; ++k) b.values.push_back(value({batch, j, q, i, k}));
        out.push_back(std::move(b));
      }
  } else if (t.dim() == 4) {
    // (B, h, T, X): one block per head
    for (int64_t h = 0; h < s[1]; ++h) {
      Block b{s[1] > 1 ? head_word + std::to_string(h) : "", s[2], s[3], {}, map};
      for (int64_t i = 0; i < s[2]; ++i)
        for (int64_t j = 0; j < s[3]; ++j) b.values.push_back(value({batch, h, i, j}));
      out.push_back(std::move(b));
    }
  }
  set_common_range(out);
  return out;
}

void set_common_range(std::vector<Block>& blocks) {
  float lo = 0, hi = 0;
  bool any = false;
  for (const Block& b : blocks)
    for (float v : b.values)
      if (std::isfinite(v)) {
        lo = any ? std::min(lo, v) : v;
        hi = any ? std::max(hi, v) : v;
        any = true;
      }
  for (Block& b : blocks) {
    const auto ends = colormap_ends(b.map, lo, hi);
    b.lo = ends[0], b.hi = ends[1];
  }
}

namespace {

float widest(const std::vector<std::string>& labels, float size) {
  float w = 0;
  for (const auto& l : labels) w = std::max(w, text_width(l, size));
  return w;
}

}  // namespace

BlocksLayout add_blocks(Figure& f, const Theme& th, const Rect& area, const std::vector<Block>& blocks,
                        const AxisLabels& labels, VAlign valign) {
  BlocksLayout out;
  if (blocks.empty()) return out;
  const int64_t rows = blocks.front().rows, cols = blocks.front().cols;
  const int n = static_cast<int>(blocks.size());
  const bool named = !blocks.front().name.empty();
  const float name_h = named ? 40.0f : 0.0f;  // the block's name above its column labels
  const int64_t groups = static_cast<int64_t>(labels.col_groups.size());
  const bool grouped = groups > 1 && cols % groups == 0;
  const float group_h = grouped ? 44.0f : 0.0f;  // the groups' brackets, under the name
  const float top_h = name_h + group_h;
  const float gap_x = 40, gap_y = 20;
  // Room the labels take where they are drawn, and the summary line where they are not.
  const float row_label_w =
      labels.rows.empty() ? 0.0f : std::min(360.0f, widest(labels.rows, kBodySize) + 20.0f);
  const float col_label_h = 38.0f, note_h = 44.0f;
  const float col_label_w = labels.cols.empty() ? 0.0f : widest(labels.cols, kLabelMin);

  // One candidate: g blocks per grid row, each axis labelled or summarised. Cells fill the
  // height they are given but are never taller than wide (a square score matrix must not
  // look like a column of bars); they widen up to 3x their height only to hold column labels.
  struct Grid {
    int g = 1, gr = 1;
    bool row_labels = false, col_labels = false;
    Rect area;  // the blocks' area: right of the row labels, under the summary line
    float cw = 0, ch = 0;
  };
  auto grid = [&](int g, bool row_lab, bool col_lab) {
    Grid q;
    q.g = g;
    q.gr = (n + g - 1) / g;
    q.row_labels = row_lab;
    q.col_labels = col_lab;
    const bool summary = (!labels.rows.empty() && !row_lab) || (!labels.cols.empty() && !col_lab);
    const float lw = row_lab ? row_label_w : 0.0f, top = summary ? note_h : 0.0f;
    q.area = {area.x + lw, area.y + top, area.w - lw, area.h - top};
    const float bw = (q.area.w - static_cast<float>(g - 1) * gap_x) / static_cast<float>(g);
    const float bh = (q.area.h - static_cast<float>(q.gr) * (top_h + (col_lab ? col_label_h : 0.0f)) -
                      static_cast<float>(q.gr - 1) * gap_y) /
                     static_cast<float>(q.gr);
    const float widest_cell = bw / static_cast<float>(cols);
    q.ch = std::max(1.0f, std::min(bh / static_cast<float>(rows), widest_cell));
    q.cw = std::max(1.0f, std::min(widest_cell, q.ch * (col_lab ? 3.0f : 1.0f)));
    return q;
  };
  // A labelled axis counts only where its labels fit at >= kLabelMin.
  auto fits = [&](const Grid& q) {
    return (!q.row_labels || q.ch * 0.8f >= kLabelMin) && (!q.col_labels || col_label_w <= q.cw - 12);
  };
  // The grid with the largest cells, counting each labelled axis as half as large again (a
  // readable axis is worth some cell size) and a cell wider than 1.5x its height as no larger
  // than that (three blocks of flat cells in two rows lose to three square ones in a row).
  Grid best = grid(1, false, false);
  float best_score = -1;
  for (int g = 1; g <= n; ++g)
    for (int lab = 0; lab < 4; ++lab) {
      const bool row_lab = lab & 1, col_lab = lab & 2;
      if ((row_lab && static_cast<int64_t>(labels.rows.size()) != rows) ||
          (col_lab && static_cast<int64_t>(labels.cols.size()) != cols))
        continue;
      const Grid q = grid(g, row_lab, col_lab);
      if (!fits(q)) continue;
      const float score = std::sqrt(std::min(q.cw, 1.5f * q.ch) * q.ch) *
                          (1.0f + 0.5f * static_cast<float>(row_lab) + 0.5f * static_cast<float>(col_lab));
      if (score > best_score) best_score = score, best = q;
    }
  const int g = best.g;
  const float ch = best.ch, cw = best.cw;
  const Rect& grid_area = best.area;
  out.grid_rows = best.gr;
  const float block_w = cw * static_cast<float>(cols), block_h = ch * static_cast<float>(rows);
  const float used_w = static_cast<float>(g) * block_w + static_cast<float>(g - 1) * gap_x;
  const float x0 = grid_area.x + (grid_area.w - used_w) / 2;
  const float labels_h = best.col_labels ? col_label_h : 0.0f;
  const float row_h = top_h + labels_h + block_h;
  const float used_h = static_cast<float>(best.gr) * row_h + static_cast<float>(best.gr - 1) * gap_y;
  const float y0 = grid_area.y + (valign == VAlign::Middle ? std::max(0.0f, (grid_area.h - used_h) / 2) : 0.0f);

  // Labels are drawn as large as the cells allow (kLabelMin at least, as fits() checked).
  const float row_size = std::min(kBodySize, ch * 0.8f);
  out.row_labels = best.row_labels;
  float col_size = kBodySize;
  while (col_size > kLabelMin && widest(labels.cols, col_size) > cw - 12) col_size -= 1;
  out.col_labels = best.col_labels;

  std::string note;
  if (!labels.rows.empty() && !out.row_labels) note = summarize_labels(labels.rows, labels.row_noun);
  if (!labels.cols.empty() && !out.col_labels)
    note += (note.empty() ? "" : "   ·   ") + summarize_labels(labels.cols, labels.col_noun);
  if (!note.empty())
    f.text(area.x, area.y + note_h / 2 - 4, fit_text(note, kLabelMin, area.w), kLabelMin, th.muted, Anchor::Start,
           false, "note");

  for (int i = 0; i < n; ++i) {
    const int gx = i % g, gy = i / g;
    const float bx = x0 + static_cast<float>(gx) * (block_w + gap_x);
    const float by = y0 + static_cast<float>(gy) * (row_h + gap_y);
    const Block& b = blocks[static_cast<size_t>(i)];
    if (named)
      f.text(bx + block_w / 2, by + name_h / 2 - 4, fit_text(b.name, kLabelMin, block_w), kLabelMin, th.text,
             Anchor::Middle, true, "label");
    const Rect cell_rect{bx, by + top_h + labels_h, block_w, block_h};
    Heatmap h;
    h.rect = cell_rect;
    h.rows = b.rows;
    h.cols = b.cols;
    h.values = b.values;
    h.map = b.map;
    h.lo = b.lo;
    h.hi = b.hi;
    h.gap = th.background;
    f.heatmap(std::move(h));
    out.cells.push_back(cell_rect);
    if (grouped) {
      // Each group: a bracket over its columns, its name over the bracket where it fits, and
      // a gap in the background colour where it meets the next group.
      const float gw = block_w / static_cast<float>(groups), y = by + name_h + group_h - 8;
      for (int64_t k = 0; k < groups; ++k) {
        const float x = bx + static_cast<float>(k) * gw;
        f.line(x + 4, y, x + gw - 4, y, th.muted, 2);
        f.line(x + 4, y, x + 4, y + 8, th.muted, 2);
        f.line(x + gw - 4, y, x + gw - 4, y + 8, th.muted, 2);
        const std::string& name = labels.col_groups[static_cast<size_t>(k)];
        if (text_width(name, kLabelMin) + 8 <= gw)
          f.text(x + gw / 2, y - 20, name, kLabelMin, th.text, Anchor::Middle, false, "label");
        if (k > 0)
          f.line(x, cell_rect.y, x, cell_rect.bottom(), th.background, std::clamp(cw * 0.25f, 2.0f, 6.0f));
      }
    }
    if (out.col_labels)
      for (int64_t c = 0; c < cols; ++c)
        f.text(bx + (static_cast<float>(c) + 0.5f) * cw, by + top_h + labels_h / 2, labels.cols[static_cast<size_t>(c)],
               col_size, th.text, Anchor::Middle, false, "label");
    if (out.row_labels && gx == 0)
      for (int64_t r = 0; r < rows; ++r)
        f.text(bx - 10, cell_rect.y + (static_cast<float>(r) + 0.5f) * ch,
               fit_text(labels.rows[static_cast<size_t>(r)], row_size, row_label_w - 12), row_size, th.text, Anchor::End,
               false, "label");
  }
  return out;
}

Legend legend_for(const std::vector<Block>& blocks, const std::string& what) {
  Legend lg;
  lg.what = what;
  if (blocks.empty()) return lg;
  lg.map = blocks.front().map;
  lg.lo = blocks.front().lo;
  lg.hi = blocks.front().hi;
  for (const Block& b : blocks)
    for (float v : b.values) {
      const Mark m = mark_of(v);
      lg.nan |= m == Mark::NaN;
      lg.neginf |= m == Mark::NegInf;
      lg.posinf |= m == Mark::PosInf;
    }
  return lg;
}

}  // namespace attnsim::figure
