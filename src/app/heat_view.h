// A heatmap view: draws one display (or a transition into it) inside the current ImGui
// window region, with zoom and pan, token labels, head labels, hover and highlights.
// Used by the tensor panel, the memory panel and the bug lab.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

#include "app/display.h"
#include "views/transition.h"

namespace attnsim::app {

struct ViewState;

struct HeatViewSpec {
  const Display* to = nullptr;
  const Display* from = nullptr;        // transition source (may be null)
  TransitionKind kind = TransitionKind::Appear;
  const std::vector<Segment>* segments = nullptr;  // Rearrange / Copy
  float t = 1.0f;                       // transition progress 0..1
  bool per_head_scale = false;
  bool by_column = false;               // Product: columns form (a linear layer's output)
  const std::vector<std::string>* row_labels = nullptr;  // tokens for rows
  const std::vector<std::string>* col_labels = nullptr;  // tokens for columns (scores)
  bool label_rows = true;               // false: a view right beside one with the same rows
  bool row_sums = false;                // alpha: show each row's sum
  int64_t heads = 0;                    // Matrix of width d: mark the h head ranges on top
  int64_t highlight_storage = -1;       // outline the element at this storage index
  std::vector<int64_t> marked_storage;  // outline these too (edited input cells)
  ImVec2 size{0, 0};                    // 0 = the remaining content region
  const char* id = "heat";
};

struct HeatViewResult {
  int64_t hovered = -1;                 // element of `to` under the pointer
  std::vector<ImVec4> block_rows;       // screen rect of every block row (x, y, w, h)
};

HeatViewResult draw_heat_view(ViewState& view, const HeatViewSpec& spec);

// Colour bar and the NaN / -inf / +inf swatches, drawn by the heatmap shader itself.
void draw_legend(const Display& d);

// Head colours (bands, block outlines), readable on a projector.
ImU32 head_colour(int64_t head, float alpha = 1.0f);

}  // namespace attnsim::app
