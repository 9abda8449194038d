// Layouts: where each logical element of a tensor sits on screen. Pure functions, no OpenGL.
//
// A layout takes one batch element of a step's tensor (the "slice": the batch dim removed)
// and gives every element a cell in a block; blocks sit at positions in layout units
// (1 unit = 1 cell). The kinds follow the shapes of the forward pass:
//
//   Matrix    (T, d)        query, q_proj, ctx_concat, out      one block, T rows, d cols
//   Bands     (T, h, dk)    q_view, ctx_transposed, ...          h bands side by side, a gap
//                                                                between them: the d axis split
//   Stacked   (h, T, dk)    q_heads, k_heads, v_heads, ctx_heads h blocks top to bottom
//                                                                (a very tall stack wraps
//                                                                into columns)
//   HeadGrid  (h, Tq, Tk)   scores ... alpha, mask (h = 1)       one block per head, in a grid
// (The memory strip in storage order is a figure: figure/memory_figure.h.)
//
// Every element also records its storage index, so two layouts of tensors that share a
// storage can be matched element by element (transition.h).
// The value atlas stacks the blocks top to bottom: one texture per layout holds the values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tensor.h"

namespace attnsim::app {

enum class LayoutKind { Matrix, Bands, Stacked, HeadGrid };
const char* layout_kind_name(LayoutKind kind);

// The layout a step's tensor is drawn in (one name per step, from trace.h).
LayoutKind layout_for_step(const std::string& step);

struct Rect {
  float x = 0, y = 0, w = 0, h = 0;
  bool contains(float px, float py) const { return px >= x && py >= y && px < x + w && py < y + h; }
};

struct Block {
  int64_t head = -1;       // head index, or -1 when the block is not one head
  int64_t rows = 0, cols = 0;
  float x = 0, y = 0;      // top-left, layout units
  int64_t atlas_row = 0;   // first row of this block in the value atlas
};

struct Place {
  int32_t block = 0, row = 0, col = 0;
};

struct Layout {
  LayoutKind kind = LayoutKind::Matrix;
  Dims shape;                     // the slice's shape (batch removed)
  std::vector<Block> blocks;
  std::vector<Place> places;      // one per slice element, C order
  std::vector<int64_t> storage;   // storage index of each slice element
  std::vector<int64_t> atlas_element;  // element at each atlas cell, or -1
  float width = 0, height = 0;    // extent in layout units
  int64_t atlas_cols = 0, atlas_rows = 0;

  int64_t numel() const { return static_cast<int64_t>(places.size()); }
  Rect rect(int64_t element) const;
  // Element under (x, y) in layout units, or -1.
  int64_t hit(float x, float y) const;
  // Element whose storage index is s, or -1.
  int64_t element_at_storage(int64_t s) const;
  // Slice index (C order) of an element: {t, j} for Matrix, {h, t, j} for Stacked, ...
  Dims index_of(int64_t element) const;
};

inline constexpr float kBandGap = 0.6f;   // between bands of one row
inline constexpr float kBlockGap = 1.5f;  // between head blocks

// Lays out batch element `batch` of a tensor with this shape/strides/offset. A tensor whose
// first dim is not a batch dim does not exist in the trace (every step is (B, ...)).
Layout make_layout(LayoutKind kind, const Dims& shape, const Dims& strides, int64_t offset,
                   int64_t batch);
Layout make_layout(LayoutKind kind, const Tensor& t, int64_t batch);

// The slice's values arranged as the atlas (atlas_rows x atlas_cols, row-major; every
// layout kind gives each atlas cell one element).
std::vector<float> atlas_values(const Layout& layout, const Tensor& t);

}  // namespace attnsim::app
