// The flash panel's picture as one figure: what panel_flash.cpp draws through the ImGui sink
// (figure_imgui.h). The tile grid with the running m and l is the slide's own builder
// (figure/flash_figure.h add_flash_tiles), so the working panel, the slide view and the
// exported slide show one figure; beside it the output rows so far against the exact output.
// GL-free (attnsim_app_core) so the tests read back what the panel draws.
//
//   +------------------------- width x height units (panel px / scale) -------------------------+
//   | add_flash_tiles: tile grid | m / l per row | traffic             |  O/l so far   exact     |
//   |                                                                   |  [Tq x dk]   [Tq x dk]  |
//   |  caption (a bug the tiled walk does not reproduce)                |  max |diff| 0.0000012   |
//   +-------------------------------------------------------------------------------------------+
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "views/session.h"
#include "engine/flash.h"
#include "figure/figure.h"
#include "figure/flash_figure.h"
#include "lessons/lesson.h"

namespace attnsim::app {

struct FlashViewSpec {
  const RunData* run = nullptr;
  const FlashCoreResult* core = nullptr;  // flash_tile_trace(run, batch, head, block_q, block_k)
  int64_t batch = 0, head = 0, block_q = 1, block_k = 1;
  size_t event = 0;                       // index into core->events
  float width = 1920, height = 720;       // figure units (the panel's pixels / its scale)
  lessons::Lang lang = lessons::Lang::En;
  std::string theme = "projector";
};

struct FlashView {
  figure::Figure figure;
  figure::Rect tiles_area;                 // where add_flash_tiles drew
  figure::FlashTilesLayout tiles;          // its grid, rows and the m / l texts
  std::vector<figure::Rect> outputs;       // the two output heatmaps: O/l so far, exact
  std::vector<float> now, exact;           // (Tq, dk): O/l of the rows reached (0 elsewhere), exact
  std::vector<bool> reached;               // per query row: a tile or final event has written it
  double worst = 0;                        // max |now - exact| over the rows reached
  size_t caption = SIZE_MAX;               // item index of the bug caption, when there is one
};

// The sentence under the grid when the run has a bug the tiled path does not reproduce
// (flash.h runs the correct math; only no-scale is shown): empty otherwise.
std::string flash_bug_caption(const MhaConfig& config, lessons::Lang lang);

// Throws Error (no trace, event out of range).
FlashView flash_view(const FlashViewSpec& spec);

}  // namespace attnsim::app
