// Heatmap figures of engine tensors: one block per head (or one block for a matrix), token
// labels on both axes where they fit at >= kLabelMin, a one-line summary where they do not.
//
//   tensor_blocks(step, t, b)          the blocks of batch element b of a step's tensor
//   add_blocks(f, theme, area, ...)    draws blocks in the grid that gives the largest cells
//   legend_for(blocks)                 what the slide's legend says about them
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tensor.h"
#include "figure/figure.h"
#include "figure/palette.h"
#include "figure/slide.h"

namespace attnsim::figure {

// One heatmap block: rows x cols values with its own colour map.
struct Block {
  std::string name;                 // "head 0", "correct", "difference", "" for a lone matrix
  int64_t rows = 0, cols = 0;
  std::vector<float> values;        // row-major
  ColorMapId map = ColorMapId::Diverging;
  float lo = -1, hi = 1;
};

struct AxisLabels {
  std::vector<std::string> rows, cols;
  std::string row_noun = "rows", col_noun = "columns";
  // Names of equal groups of columns, bracketed over the columns and split apart by a thin
  // gap in the heatmap: the h heads of a (T, d) matrix ("head 0" .. "head 3").
  std::vector<std::string> col_groups;
};

// The colour map a step's values use: alpha and alpha_dropped are weights (viridis, 0..max),
// mask is shown / hidden, everything else is signed (diverging, symmetric about 0).
ColorMapId map_for_step(const std::string& step);

// The (B, T, h, dk) steps: d split into heads by a view, the token axis still first.
bool is_bands_step(const std::string& step);

// Blocks of batch element `batch` of a step's tensor (B, ...):
//   (B, T, d)      one block T x d
//   (B, T, h, dk)  one block T x (h·dk), heads side by side in their columns: the view cuts
//                  d without moving anything, so it stays one matrix (is_bands_step)
//   (B, h, T, X)   h blocks T x X ("head i"): after the transpose each head is its own block
//   (B, g, h/g, T, dk)  the grouped K/V view: h blocks T x dk ("head i · K/V j")
// The range is shared by all blocks (finite values only). `head_word` names the blocks
// ("head " + i; a Korean slide passes "헤드 ").
std::vector<Block> tensor_blocks(const std::string& step, const Tensor& t, int64_t batch,
                                 const std::string& head_word = "head ");
// Shared range: [0, max] for weights, [-m, m] for signed maps, [0, 1] for the mask.
void set_common_range(std::vector<Block>& blocks);

struct BlocksLayout {
  std::vector<Rect> cells;      // each block's heatmap rectangle
  bool row_labels = false, col_labels = false;  // drawn in full (else summarised)
  int grid_rows = 1;            // row labels repeat left of each grid row
};

// Where a grid that does not need the whole height sits: at the top (a panel, with widgets
// under it) or in the middle (a slide).
enum class VAlign : uint8_t { Top, Middle };

// Draws the blocks inside `area` in the grid (g columns) that gives the largest cells, with
// row labels left of each grid row and column labels above each block where they fit. Cells
// are never taller than wide, so a block keeps its matrix's proportions or is wider.
BlocksLayout add_blocks(Figure& f, const Theme& theme, const Rect& area, const std::vector<Block>& blocks,
                        const AxisLabels& labels, VAlign valign = VAlign::Top);

Legend legend_for(const std::vector<Block>& blocks, const std::string& what);

}  // namespace attnsim::figure
