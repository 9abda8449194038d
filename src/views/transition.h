// Transitions between two steps' layouts. Pure functions, no OpenGL.
//
// Elements are matched, never hand-placed per step:
//   Rearrange  view / transpose: the two tensors share a storage, so the element at storage
//              index s in one layout is the element at storage index s in the other. A view
//              (T,d) -> (T,h,dk) splits the d axis into bands; a transpose moves the bands
//              into stacked head blocks; the values never change.
//   Copy       contiguous: a new storage; element i of the copy holds element i of the
//              source (logical index), so in the memory view each value moves from its old
//              storage cell to its new one.
//   Elementwise scale, mask fill, softmax, dropout: same cells, new values (cross-fade).
//   Product    q·kᵀ, alpha·v, the linear layers: the result forms cell by cell while the
//              inputs it reads are highlighted.
//   Appear     an input, or the mask: nothing to move from.
// Runs of elements that stay adjacent in both layouts are merged into one segment, so the
// article's (128, 512) slice moves as 1024 strips, not 65536 cells.
#pragma once

#include <string>
#include <vector>

#include "views/layout.h"
#include "engine/trace.h"

namespace attnsim::app {

enum class TransitionKind { Appear, Rearrange, Copy, Elementwise, Product };
const char* transition_kind_name(TransitionKind kind);

// How `to` is animated from `from` (its first input); from may be null (an input step).
TransitionKind transition_kind(const Step* from, const Step& to);

struct Segment {
  Rect from, to;                      // layout units of each layout
  int32_t from_row = 0, from_col = 0; // first cell in the from layout's atlas
  int32_t to_row = 0, to_col = 0;     // first cell in the to layout's atlas
  int32_t length = 1;                 // cells in the run (along a row)
};

// Every element of `to` matched to the element of `from` with the same storage index
// (Rearrange). Elements with no partner are left out.
std::vector<Segment> match_by_storage(const Layout& from, const Layout& to);
// Element i of `to` matched to element i of `from` (Copy, Elementwise); needs equal numel.
std::vector<Segment> match_by_index(const Layout& from, const Layout& to);

// Smooth 0..1 -> 0..1 (ease in and out).
float ease(float t);
Rect lerp(const Rect& a, const Rect& b, float t);

// Product: how far along cell (row, col) of a rows x cols result is at overall progress t
// (0 = not started, 1 = formed). Row by row, or column by column for W_O's output, where
// every output column reads all heads.
float reveal(int64_t row, int64_t col, int64_t rows, int64_t cols, float t, bool by_column);

}  // namespace attnsim::app
