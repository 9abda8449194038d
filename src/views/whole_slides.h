// The whole pass's slides of a model folder (--export with --panel sampling or overview): an
// attnsim checkpoint (the shipped toy model by default) or a Hugging Face folder, on --text
// when given. Figures only (src/figure), so the CLI, CI and the app export the same ones.
#pragma once

#include <string>

#include "figure/figure.h"
#include "views/gif_scenes.h"
#include "views/i18n.h"
#include "views/options.h"

namespace attnsim::app {

// "sampling": the chart at --temperature / --top-k / --top-p / --seed; "overview": the whole
// model; "lens": the logit lens and the direct logit attribution (lens_figure.h). Throws Error (one line) for a bad folder, text or sampling setting.
figure::Figure whole_slide(const Options& o, Lang lang);

// The same two as animations (--export-gif / --export-frames), fps × seconds frames:
//   sampling   the chart as the temperature sweeps from 0.25 to 2 (a geometric sweep), top-k,
//              top-p and seed as given: the distribution flattening and the kept set growing
//   overview   the stream walked stage by stage: the embedding, each block, then the logits,
//              the norm heatmap gaining a column per stage, the last frame held
Animation whole_animation(const Options& o, Lang lang);

}  // namespace attnsim::app
