// The memory strip as a figure: one batch element's storage as cells in storage order, wrapped
// a whole number of tokens per row, with the stride walk: a line through the cells in logical
// (C) order, the first cells numbered. A view with new strides walks the same strip in a new
// order; a copy (contiguous) shows the source strip above the new one, both walked, so the
// numbers show where each value went.
//
//   storage #2 · shape (6, 4, 4) · strides (4, 16, 1) · not contiguous      <- headline
//   same storage as q_view, new strides: 0 bytes copied                     <- detail
//   storage #2 (q_heads)
//   [0 ][1 ][2 ][3 ][  ][  ]...      the walk: 0 1 2 3, then a jump of 16 cells
//   [4 ][5 ][6 ][7 ][  ][  ]...
//
// Cells hold the stored values on the step's colour map (tensor_figure.h map_for_step: the
// tensor view's map); every number drawn is the tensor's own storage index order (Tensor
// strides and offset), nothing modelled beside the engine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tensor.h"
#include "figure/figure.h"
#include "figure/palette.h"
#include "figure/slide.h"

namespace attnsim::figure {

// One strip: the storage of tensor[batch] (its lowest to highest storage index).
struct Strip {
  const Tensor* tensor = nullptr;  // F32 or Bool, any strides
  int64_t batch = 0;
  std::string name;                // "storage #2 (q_heads)"
};

// The walked order of one strip: storage cells (relative to the strip's first cell) of the
// logical elements 0, 1, 2, ... of tensor[batch], and the strip's cell values.
struct StripCells {
  int64_t base = 0;                // the lowest storage index of tensor[batch]
  std::vector<float> values;       // storage values base .. base + size - 1
  std::vector<int64_t> walk;       // walk[e] = storage index of logical element e - base
};
StripCells strip_cells(const Tensor& t, int64_t batch);  // throws Error (batch out of range)

struct MemorySpec {
  std::vector<Strip> strips;       // one (a view), or source then new storage (a copy)
  int64_t unit = 0;                // cells per token (d_model): rows wrap at a multiple of it
  ColorMapId map = ColorMapId::Diverging;  // map_for_step of the step shown
  std::string headline, detail;    // over the strips: one line, and up to two (accent colour)
  int64_t walk = 0;                // logical elements the line walks (0: one slice of axis 1)
  float arrived = 1;               // a copy in motion: the fraction of the last strip's cells
                                   // written so far (in its storage order); the rest is blank
};

struct MemoryLayout {
  int64_t wrap = 0;                          // cells per strip row
  std::vector<Rect> strips;                  // each strip's heatmap
  std::vector<int64_t> base;                 // per strip: the storage index of its first cell
  std::vector<int64_t> cells;                // per strip: its cell count (the rest of the last row is blank)
  std::vector<std::vector<size_t>> numbers;  // per strip: item indices of the order numbers 0, 1, ...
  std::vector<std::vector<int64_t>> walked;  // per strip: the cells the line goes through
};

// Cells per row: `unit` times as many tokens as keep the cells about square in `area`.
int64_t strip_wrap(int64_t cells, int64_t unit, const Rect& area, int strips);

MemoryLayout add_memory_strips(Figure& f, const Theme& th, const Rect& area, const MemorySpec& spec);

// The scale shared by the strips' colours: colormap_ends of spec.map over their finite values.
Legend memory_legend(const MemorySpec& spec, const std::string& what);

}  // namespace attnsim::figure
