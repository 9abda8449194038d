// The whole model at a glance, as a figure (src/figure): one description for the model panels'
// Overview tab and every export (PNG, SVG, PDF).
//
//   tokens → embed → block 0 … block L−1 on the residual stream → logits → probs
//
// Each block is drawn on the stream it reads and writes: its attention (the top half) and, in
// a model with one, its MLP (the bottom half). Under the stages sits the stream's norm ‖x‖
// per position (rows, the tokens as labels) and per stage (columns: embed, then each block's
// output), a heatmap in the Viridis map; under logits and probs, the last position's answer.
// The layout says where each block went, so a click can open that block's steps.
#pragma once

#include <string>
#include <vector>

#include "figure/figure.h"
#include "figure/palette.h"
#include "views/i18n.h"
#include "views/whole_run.h"

namespace attnsim::app {

struct OverviewInput {
  const WholeRun* run = nullptr;
  std::vector<std::string> tokens;  // one label per position
  std::string answer;               // the last position's top token, as a label
  bool mlp = false;                 // the blocks have an MLP beside the attention
  // Stages drawn so far, for the animation that walks the stream (whole_slides.h): 0 the
  // embedding, 1 + l block l, L + 1 the logits and probabilities; stages past it are empty
  // frames and their norm columns absent. -1: every stage.
  int64_t reveal = -1;
};

struct OverviewLayout {
  std::vector<figure::Rect> blocks;  // per block: its box (a click target)
  figure::Rect embed, logits;
  size_t norm_item = 0;              // the heatmap: rows = positions, columns = embed, block 0 …
};

// Appends the overview inside `area`.
OverviewLayout add_overview(figure::Figure& f, const figure::Theme& theme, const figure::Rect& area,
                            const OverviewInput& in, Lang lang);
// The overview alone, `width` x `height` units, for a panel.
figure::Figure overview_view_figure(const OverviewInput& in, Lang lang, const std::string& theme, float width,
                                    float height, OverviewLayout* layout = nullptr);
// The overview as a slide: a title, the norms' legend, a caption.
figure::Figure overview_slide(const OverviewInput& in, const std::string& title, Lang lang, const std::string& theme);

}  // namespace attnsim::app
