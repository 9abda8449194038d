// The article's experiments (model::run_experiment) as figures: the Experiments tab draws the
// same figure its slide exports, so a chart on screen is the chart in the deck.
//
//   ablation     repeat accuracy change (points) per head knocked out alone   signed bars
//   dk-sweep     mean row entropy per h  |  final loss per h                   two charts
//   prune        repeat accuracy per heads kept: prune-after vs train-few      grouped bars
//   one-vs-many  repeat loss per h  |  repeat accuracy per h                   two charts
//   roles        induction score per head, before vs after training           grouped bars
//   sink         first-token share per head                                    bars
//   streaming    next-token loss by position, one line per cache policy        line plot
//
// Every number drawn is a field of the result's JSON (what `attnsim-cli experiment NAME
// --json` prints); the conclusion is the result's own sentence, translated with its values.
#pragma once

#include <string>

#include "views/i18n.h"
#include "figure/figure.h"
#include "figure/palette.h"
#include "model/experiments/experiments.h"

namespace attnsim::app {

inline constexpr int kExperimentSteps = 600;  // the Experiments tab's default steps per model

// How the app runs an experiment on the model it shows (the Experiments tab and its export):
// models trained for `steps` steps at the checkpoint's sizes, seed 1, lr 2e-3; the
// checkpoint itself for roles, ablation, sink and streaming.
model::ExperimentOptions experiment_options(const model::ModelConfig& checkpoint, const std::string& model_dir,
                                            int steps);

// The result's charts inside `area` (two side by side where the experiment has two).
// Throws Error for a result whose JSON lacks the fields its chart reads.
void add_experiment_charts(figure::Figure& f, const figure::Theme& theme, const figure::Rect& area,
                           const model::ExperimentResult& r, Lang lang);

// The conclusion sentence in `lang`, its values filled in.
std::string experiment_conclusion(const model::ExperimentResult& r, Lang lang);

// The working panel's figure, `width` units wide: the conclusion (up to three lines) over the
// charts; its height follows.
figure::Figure experiment_view(const model::ExperimentResult& r, Lang lang, const std::string& theme, float width);

// The slide: the experiment's name as the title, the charts, the conclusion as the caption.
figure::Figure experiment_slide(const model::ExperimentResult& r, Lang lang, const std::string& theme);

}  // namespace attnsim::app
