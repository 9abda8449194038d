// Exports through the figure sinks (src/figure), without a window: the CLI and CI can run
// them with no display. The window's own capture path (capture.h) stays for screenshots.
#pragma once

#include "views/options.h"

namespace attnsim::app {

// --export FILE.{svg,pdf} or --export FILE.png --slide: the step (or --panel buglab) as a slide.
int run_figure_export(const Options& options);
// --export-slides DIR [--lesson FILE] --format png|svg|pdf: a title page and one slide per
// step (pdf: one deck, DIR/lesson.pdf), plus DIR/index.md and an offline DIR/index.html.
int run_slides_export(const Options& options);
// --export-gif FILE.gif / --export-frames DIR: the transition --from -> --to (gif_scenes.h).
int run_animation_export(const Options& options);

}  // namespace attnsim::app
