// The bug lab panel's picture as one figure: the buglab slide's triptych (slide_scenes.h
// buglab_blocks: correct, with the bug, their difference for one head) laid out by the
// slide's own add_blocks, sized to the panel. panel_buglab.cpp draws it through the ImGui sink
// (figure_imgui.h), so the working panel, the slide view and the exported slide show one
// figure; the buttons, the head slider and the NaN table stay widgets around it.
// GL-free (attnsim_app_core) so the tests read back what the panel draws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "views/session.h"
#include "figure/figure.h"
#include "figure/tensor_figure.h"
#include "lessons/lesson.h"

namespace attnsim::app {

struct BuglabViewSpec {
  const RunData* run = nullptr;     // with its reference run (has_reference)
  std::string step;
  int64_t batch = 0, head = 0;
  float width = 1280, height = 400; // figure units (the panel's pixels / its scale)
  lessons::Lang lang = lessons::Lang::En;
  std::string theme = "projector";
};

struct BuglabView {
  figure::Figure figure;
  std::vector<figure::Block> blocks;  // correct, with the bug, difference (empty: nothing to compare)
  figure::BlocksLayout layout;        // each block's heatmap rectangle
  int64_t differing = 0;              // cells of the shown head where the difference is not 0
};

// Throws Error (no run, unknown step).
BuglabView buglab_view(const BuglabViewSpec& spec);

}  // namespace attnsim::app
