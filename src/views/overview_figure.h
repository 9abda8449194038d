// The whole model at a glance, as a figure (src/figure): one description for the model panels'
// Overview tab and every export (PNG, SVG, PDF).
//
//   tokens → embedding → block 0 … block L−1 on the residual stream → logits → probabilities
//
// Each block is drawn as the steps it runs, top to bottom: its norm, its heads (each head a
// small map of its attention weights on the sequence on screen), the add back into the
// stream, the second norm, the MLP, the second add (a step the model skips is left out).
// One block can be drawn open (`expanded`): it takes the width the others give up and lists
// its steps in order, each with its display name, its stable step name in small type and its
// shape, the heads' maps larger under the attention weights.
//
// Under the stages (or beside them, where the figure is wider than tall, as a slide) sits the
// stream's norm ‖x‖ per position (rows, every token labelled) and per stage (columns: the
// embedding, then each block's output), a heatmap in the Viridis map; beside the last row,
// the model's answer. The layout says where each block, head and step went, so a click can
// open a block or select a step.
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
  bool mlp = false;                 // the blocks have an MLP (a run without step shapes)
  // Stages drawn so far, for the animation that walks the stream (whole_slides.h): 0 the
  // embedding, 1 + l block l, L + 1 the logits and probabilities; stages past it are empty
  // frames and their norm columns absent. -1: every stage.
  int64_t reveal = -1;
  int64_t expanded = -1;  // the block drawn open (-1: none)
  // Rows keep a label's height and the figure grows past its area to hold them (a panel that
  // scrolls); false: the rows fit the area (a slide), every k-th labelled where they must.
  bool grow = false;
  int beside = -1;  // the norms beside the stages: 1, under them: 0, chosen by the area: -1
};

// One of the open block's steps: its stable name ("q_proj", whole_pass.h / engine/trace.h)
// and the row that lists it.
struct OverviewStep {
  std::string step;
  figure::Rect rect;
};

struct OverviewLayout {
  std::vector<figure::Rect> blocks;               // per block: its box (a click target)
  std::vector<std::vector<figure::Rect>> heads;   // [block][head]: its map (none for an unreached block)
  std::vector<OverviewStep> steps;                // the open block's steps, in order
  figure::Rect header;                            // the open block's title row (a click closes it)
  figure::Rect embed, logits;
  size_t norm_item = 0;              // the heatmap: rows = positions, columns = embed, block 0 …
  std::vector<size_t> row_labels;    // per position: the item of its label
  bool beside = false;               // the norms went beside the stages (a wide area)
  float height = 0;                  // the units the overview needs at its width (>= area.h
                                     // when every row's label needs more than it was given)
};

// Appends the overview inside `area`.
OverviewLayout add_overview(figure::Figure& f, const figure::Theme& theme, const figure::Rect& area,
                            const OverviewInput& in, Lang lang);
// The overview alone, `width` units wide and at least `height` tall (taller when its rows need
// it: the panel scrolls; `in.grow` is set), for a panel: the norms under the stages, or beside
// them where under them they would scroll and the panel is wide (a 720p window), unless
// `in.beside` says which.
figure::Figure overview_view_figure(const OverviewInput& in, Lang lang, const std::string& theme, float width,
                                    float height, OverviewLayout* layout = nullptr);
// The overview as a slide: a title, the norms' legend, a caption (`caption`, a lesson step's;
// empty: the slide's own).
figure::Figure overview_slide(const OverviewInput& in, const std::string& title, Lang lang, const std::string& theme,
                              const std::string& caption = "");

}  // namespace attnsim::app
