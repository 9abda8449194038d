// Slides of the trained model, for lesson steps on the model and timeline panels (and any
// caller with a checkpoint): figures (src/figure) built from the model's own numbers.
//
//   head_grid_slide   layers x heads: each head's alpha on the sequence on screen, its role
//                     badge and score, the knocked-out heads framed and crossed; beside it
//                     loss and accuracy on the first copy and the repeated part, as trained
//                     and with the heads knocked out (model::ablation_batch, zero ablation:
//                     the batch and rule the lessons' model.* figures use)
//   compare_slide     several checkpoints: each one's grid, and the same bars with one bar
//                     per model
//   timeline_slide    a run's train_log.jsonl as curves: loss per part, and the induction,
//                     previous-token and first-token score of every head against the step,
//                     with the phase-change marker (Timeline::phase_change_step) and the
//                     step of the checkpoint shown; the uniform guess's loss as a dashed line;
//                     for a recipe trained with several seeds (run_group.h) the spread over
//                     them (band, median, each seed) and how many learned
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "views/model_view.h"
#include "views/run_group.h"
#include "views/training.h"
#include "figure/plot.h"
#include "figure/slide.h"
#include "lessons/lesson.h"

namespace attnsim::app {

struct ModelSlideText {
  std::string title, caption, footer;
  lessons::Lang lang = lessons::Lang::En;
  std::string theme = "print";
  std::vector<model::HeadRef> highlight;  // heads the text names (a lesson step's): framed in the accent
  int64_t row = -1;                       // a position whose row every head map frames (highlight.token)
};

// Loss and accuracy per part of model::ablation_batch, as trained and with the view's heads
// knocked out (zero ablation).
struct AblationNumbers {
  model::LossStats trained, ablated;
  bool has_ablation = false;
};
AblationNumbers ablation_numbers(const ModelView& view);

struct HeadGridSlide {
  figure::Figure figure;
  std::vector<figure::Rect> cells;     // per head (layer * heads + head): its heatmap
  std::vector<size_t> cross_items;     // the first Line of each knocked-out head's cross
  AblationNumbers numbers;
  figure::BarLayout loss, accuracy;    // bars: [group first, repeat][trained, ablated]
};
HeadGridSlide head_grid_slide(const ModelView& view, const ModelSlideText& text);

// The grid alone, as the model panel's Heads tab draws it: `width` units wide (the "L0"
// column, then the heads), cells as large as fit up to `max_cell`, a two-line badge over each
// cell, the knocked-out heads dimmed, framed and crossed, and `below` units under each row
// left free (the panel puts its "knock out" checkboxes there), query row `row` framed in every
// map (-1: none). The slide's grid, sized for a
// panel: a head looks the same on screen and in the deck.
struct HeadGridView {
  figure::Figure figure;
  std::vector<figure::Rect> cells;  // per head (layer * heads + head): its heatmap
  std::vector<float> row_label_y;   // per layer: the middle of its row (the "L0" label)
};
HeadGridView head_grid_view(const ModelView& view, lessons::Lang lang, const std::string& theme, float width,
                            float max_cell, float below, int64_t row = -1);

// Several checkpoints on one slide (a lesson step whose claims compare models): each model's
// grid under its name, and the loss / accuracy bars with one bar per model, as trained, on
// each model's own evaluation batch.
struct CompareSlide {
  figure::Figure figure;
  std::vector<std::vector<figure::Rect>> cells;  // per model, per head
  std::vector<model::LossStats> stats;           // per model
  figure::BarLayout loss, accuracy;              // bars: [group first, repeat][model]
};
CompareSlide compare_slide(const std::vector<std::pair<std::string, const ModelView*>>& models,
                           const ModelSlideText& text);

struct TimelineSlide {
  figure::Figure figure;
  Timeline timeline;     // the open run's
  RunGroup group;        // it and the other seeds of its recipe
  std::optional<LearnedCount> learned;  // several seeds: how many learned (in the caption)
  int64_t phase_step = -1, shown_step = -1;
  // loss per part, induction, previous-token, first-token; layouts below
  std::vector<figure::PlotLayout> plots;
};

// What the plots draw beyond the run's own curves.
struct TimelineExtras {
  std::optional<model::ModelConfig> config;  // the run's: the loss plot's uniform-guess line (model/baselines.h)
  const RunGroup* group = nullptr;           // several seeds: the spread (`tl` is the open run's timeline)
};

// The four training plots of `tl` inside `area`: 2 x 2 when `grid` (a slide), else one column
// (the Training tab). x runs from 0 to `x_hi` (a live run: its planned steps); markers at the
// phase change (when found) and at `shown_step` (-1: none). Returns the layouts in order:
//   0 loss       one run:   series [first copy, repeated part]
//                a group:   bands [first copy, repeated part: min..max over the seeds],
//                           series [first copy median, each other seed's repeated part,
//                           the open run's (highlighted), repeated part median]
//                a run that logs no repeated part (recall, gist): the whole loss, as
//                           series [loss] or band [min..max], series [seeds, open, median]
//                levels [uniform guess ln(V-1)] when extras.config is given
//   1 induction  one run:   series [layer * heads + head]
//                a group:   bands [best induction score (any head): min..max],
//                           series [each other seed, the open run, median]
//   2 previous-token, 3 first-token share: series [layer * heads + head] of `tl`
std::vector<figure::PlotLayout> add_timeline_plots(figure::Figure& f, const figure::Theme& th, const figure::Rect& area,
                                                   const Timeline& tl, double x_hi, int64_t shown_step,
                                                   lessons::Lang lang, bool grid, const TimelineExtras& extras = {});

// The log of the run `checkpoint_dir` belongs to (RUN/train_log.jsonl, RUN = the folder or
// the run it is a saved step of), with the other seeds of its recipe; `shown_step` marks the
// checkpoint's step (-1: none). Throws Error when a model.json or log is missing or broken, or
// when the seeds' logs do not line up step for step (run_spread).
TimelineSlide timeline_slide(const std::string& checkpoint_dir, int64_t shown_step, const ModelSlideText& text);

// The run folder of a checkpoint: RUN for RUN/checkpoints/step-NNNNNN, else the folder.
std::string run_of_checkpoint(const std::string& checkpoint_dir);
// A checkpoint's name on a slide: its run folder's name ("induction"), ORG/NAME for a Hugging
// Face cache folder (models--ORG--NAME/snapshots/COMMIT); never a path, which would tell the
// audience where the teacher keeps files.
std::string checkpoint_name(const std::string& checkpoint_dir);

}  // namespace attnsim::app
