// Headless modes: they open the window hidden (under xvfb-run in CI), render with no input
// and exit. Also the fallback when there is no display at all.
#pragma once

#include "views/options.h"

namespace attnsim::app {

// --export FILE.png: one PNG of the window or a panel (+ --geometry JSON for tests).
int run_export(const Options& options);
// --bench-frames N: frame times while animating; prints median and p95 in ms.
int run_bench(const Options& options);
// --bench-edit N: N edits in turn (one input cell, the causal mask, a bug), each timed from
// the edit to the end of the first frame that shows its run; prints median and p95 in ms.
int run_bench_edit(const Options& options);
// No display: export the scenario's slides to a folder instead (figures need no window).
int run_without_display(const Options& options, const std::string& why);

}  // namespace attnsim::app
