// Layouts: see layout.h for the kinds and their shapes.
#include "views/layout.h"

#include <algorithm>
#include <cmath>

namespace attnsim::app {

const char* layout_kind_name(LayoutKind kind) {
  switch (kind) {
    case LayoutKind::Matrix: return "matrix";
    case LayoutKind::Bands: return "bands";
    case LayoutKind::Stacked: return "stacked";
    case LayoutKind::HeadGrid: return "head-grid";
  }
  return "?";
}

LayoutKind layout_for_step(const std::string& step) {
  if (step == "q_view" || step == "k_view" || step == "v_view" || step == "ctx_transposed" ||
      step == "ctx_contiguous")
    return LayoutKind::Bands;  // (B, T, h, dk)
  if (step == "q_heads" || step == "k_heads" || step == "v_heads" || step == "q_rot" || step == "k_rot" ||
      step == "ctx_heads" || step == "k_cache_append" || step == "v_cache_append" || step == "k_cache" || step == "v_cache" ||
      step == "k_grouped" || step == "v_grouped")
    return LayoutKind::Stacked;  // (B, h, T, dk); k/v heads, k_rot and the cache (B, g, T, dk);
                                 // the group view (B, g, h/g, T, dk): one block per query head
  if (step == "scores" || step == "scores_scaled" || step == "mask" || step == "scores_masked" ||
      step == "alpha" || step == "alpha_dropped")
    return LayoutKind::HeadGrid;  // (B, h, Tq, Tk); mask (B, 1, Tq, Tk)
  return LayoutKind::Matrix;      // (B, T, d)
}

// [SECTION] queries

Rect Layout::rect(int64_t element) const {
  const Place& p = places[static_cast<size_t>(element)];
  const Block& b = blocks[static_cast<size_t>(p.block)];
  return {b.x + static_cast<float>(p.col), b.y + static_cast<float>(p.row), 1.0f, 1.0f};
}

int64_t Layout::hit(float x, float y) const {
  for (const Block& b : blocks) {
    const Rect r{b.x, b.y, static_cast<float>(b.cols), static_cast<float>(b.rows)};
    if (!r.contains(x, y)) continue;
    const auto row = static_cast<int64_t>(y - b.y);
    const auto col = static_cast<int64_t>(x - b.x);
    return atlas_element[static_cast<size_t>((b.atlas_row + row) * atlas_cols + col)];
  }
  return -1;
}

int64_t Layout::element_at_storage(int64_t s) const {
  for (size_t e = 0; e < storage.size(); ++e)
    if (storage[e] == s) return static_cast<int64_t>(e);
  return -1;
}

Dims Layout::index_of(int64_t element) const {
  Dims index(shape.size(), 0);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[static_cast<size_t>(d)] = element % shape[static_cast<size_t>(d)];
    element /= shape[static_cast<size_t>(d)];
  }
  return index;
}

// [SECTION] construction

namespace {

// Blocks per column of a Stacked layout: one column while the stack is at most
// kStackMaxRows cell rows tall, else the number of columns that gives the largest cells
// in a 16:10 view, keeping at least two blocks per column.
constexpr int64_t kStackMaxRows = 64;

int64_t stacked_rows(int64_t n, int64_t rows, int64_t cols) {
  if (n * rows <= kStackMaxRows) return std::max<int64_t>(n, 1);
  int64_t best = n;
  float best_scale = 0;
  for (int64_t c = 1; c <= n; ++c) {
    const int64_t per_col = (n + c - 1) / c;
    if (per_col < 2 && n >= 2) break;
    const float w = static_cast<float>(c) * (static_cast<float>(cols) + kBlockGap);
    const float h = static_cast<float>(per_col) * (static_cast<float>(rows) + kBlockGap);
    const float scale = std::min(1.6f / w, 1.0f / h);
    if (scale > best_scale) {
      best_scale = scale;
      best = per_col;
    }
  }
  return best;
}

// Blocks for the rank-3 kinds; `inner` = (rows, cols) of one block, n = number of blocks.
void place_blocks(Layout& l, int64_t n, int64_t rows, int64_t cols) {
  const float fr = static_cast<float>(rows), fc = static_cast<float>(cols);
  const int64_t grid_cols = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(std::sqrt(n))));
  const int64_t stack_rows = stacked_rows(n, rows, cols);
  for (int64_t i = 0; i < n; ++i) {
    Block b;
    b.head = l.kind == LayoutKind::Matrix ? -1 : i;
    b.rows = rows;
    b.cols = cols;
    const float fi = static_cast<float>(i);
    switch (l.kind) {
      case LayoutKind::Bands: b.x = fi * (fc + kBandGap); break;
      case LayoutKind::Stacked:
        // top to bottom; a tall stack (the article: 8 x 128 rows) wraps into columns
        b.x = static_cast<float>(i / stack_rows) * (fc + kBlockGap);
        b.y = static_cast<float>(i % stack_rows) * (fr + kBlockGap);
        break;
      case LayoutKind::HeadGrid:
        b.x = static_cast<float>(i % grid_cols) * (fc + kBlockGap);
        b.y = static_cast<float>(i / grid_cols) * (fr + kBlockGap);
        break;
      default: break;
    }
    b.atlas_row = i * rows;
    l.blocks.push_back(b);
    l.width = std::max(l.width, b.x + fc);
    l.height = std::max(l.height, b.y + fr);
  }
  l.atlas_cols = cols;
  l.atlas_rows = n * rows;
}

}  // namespace

Layout make_layout(LayoutKind kind, const Dims& shape, const Dims& strides, int64_t offset,
                   int64_t batch) {
  Layout l;
  l.kind = kind;
  // The slice: batch element `batch` of dim 0.                              // view
  l.shape.assign(shape.begin() + 1, shape.end());
  const Dims slice_strides(strides.begin() + 1, strides.end());
  const int64_t slice_offset = offset + batch * strides[0];
  const int64_t n = numel_of(l.shape);
  const int64_t rank = static_cast<int64_t>(l.shape.size());

  // Storage index of every element, C order (the stride rule of tensor.h).
  l.storage.resize(static_cast<size_t>(n));
  {
    Dims idx(static_cast<size_t>(rank), 0);
    for (int64_t e = 0; e < n; ++e) {
      int64_t s = slice_offset;
      for (int64_t d = 0; d < rank; ++d) s += idx[static_cast<size_t>(d)] * slice_strides[static_cast<size_t>(d)];
      l.storage[static_cast<size_t>(e)] = s;
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++idx[static_cast<size_t>(d)] < l.shape[static_cast<size_t>(d)]) break;
        idx[static_cast<size_t>(d)] = 0;
      }
    }
  }

  // A rank that does not fit the kind falls back to a matrix of (rest, last dim).
  // Stacked also takes (g, r, T, dk): g·r blocks, so a stride-0 group view shows one block per
  // query head, each matched by storage to its group's K/V head.
  const bool grouped = kind == LayoutKind::Stacked && rank == 4;
  if ((kind == LayoutKind::Bands || kind == LayoutKind::Stacked || kind == LayoutKind::HeadGrid) &&
      rank != 3 && !grouped)
    l.kind = kind = LayoutKind::Matrix;
  const int64_t last = rank ? l.shape.back() : 1;

  l.places.resize(static_cast<size_t>(n));
  if (kind == LayoutKind::Matrix) {
    place_blocks(l, 1, n / std::max<int64_t>(last, 1), last);
    for (int64_t e = 0; e < n; ++e)
      l.places[static_cast<size_t>(e)] = {0, static_cast<int32_t>(e / last),
                                          static_cast<int32_t>(e % last)};
  } else {
    const int64_t a = grouped ? l.shape[0] * l.shape[1] : l.shape[0];
    const int64_t b = l.shape[static_cast<size_t>(rank - 2)], c = l.shape[static_cast<size_t>(rank - 1)];
    if (kind == LayoutKind::Bands) {
      // (T, h, dk): band = head index (dim 1), row = token (dim 0).
      place_blocks(l, b, a, c);
      for (int64_t e = 0; e < n; ++e)
        l.places[static_cast<size_t>(e)] = {static_cast<int32_t>((e / c) % b),
                                            static_cast<int32_t>(e / (b * c)),
                                            static_cast<int32_t>(e % c)};
    } else {
      // (h, T, x): block = dim 0.
      place_blocks(l, a, b, c);
      for (int64_t e = 0; e < n; ++e)
        l.places[static_cast<size_t>(e)] = {static_cast<int32_t>(e / (b * c)),
                                            static_cast<int32_t>((e / c) % b),
                                            static_cast<int32_t>(e % c)};
    }
  }

  l.atlas_element.assign(static_cast<size_t>(l.atlas_rows * l.atlas_cols), -1);
  for (int64_t e = 0; e < n; ++e) {
    const Place& p = l.places[static_cast<size_t>(e)];
    const Block& blk = l.blocks[static_cast<size_t>(p.block)];
    l.atlas_element[static_cast<size_t>((blk.atlas_row + p.row) * l.atlas_cols + p.col)] = e;
  }
  return l;
}

Layout make_layout(LayoutKind kind, const Tensor& t, int64_t batch) {
  return make_layout(kind, t.shape(), t.strides(), t.offset(), batch);
}

std::vector<float> atlas_values(const Layout& layout, const Tensor& t) {
  std::vector<float> atlas(static_cast<size_t>(layout.atlas_rows * layout.atlas_cols), 0.0f);
  // Read straight from storage: the layout already knows each element's storage index.
  // f32() points at storage index offset(), so storage index s is f32()[s - offset()].
  const int64_t base = -t.offset();
  for (size_t e = 0; e < layout.places.size(); ++e) {
    const int64_t s = layout.storage[e] + base;
    const float v = t.dtype() == DType::F32 ? t.f32()[s] : static_cast<float>(t.b8()[s]);
    const Place& p = layout.places[e];
    const Block& b = layout.blocks[static_cast<size_t>(p.block)];
    atlas[static_cast<size_t>((b.atlas_row + p.row) * layout.atlas_cols + p.col)] = v;
  }
  return atlas;
}

}  // namespace attnsim::app
