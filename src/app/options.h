// Command-line options of attnsim. Pure parsing, tested without a window.
//
//   attnsim [--scenario NAME] [--lang ko|en]                       the window
//   attnsim --export FILE.png [--scenario NAME] [--step NAME] [--scale 1|2|4]
//           [--panel window|tensor|pipeline|memory|buglab|flash|controls|model|timeline|experiments]
//           [--experiment NAME]
//           [--model DIR] [--batch B]
//           [--transparent] [--geometry FILE.json] [--progress T]  one PNG, then exit
//   attnsim --export-slides DIR [--scenario NAME] [--scale N]      one PNG per step
//   attnsim --bench-frames N [--scenario NAME] [--train-live]      median / p95 frame ms
//   attnsim --bench-edit N [--scenario NAME]                       median / p95 edit -> new frame ms
#pragma once

#include <string>
#include <vector>

namespace attnsim::app {

enum class Mode { Window, Export, ExportSlides, Bench, BenchEdit, Help };

struct Options {
  Mode mode = Mode::Window;
  std::string scenario = "default";
  std::string step;          // empty = the scenario's focus step
  std::string output;        // --export FILE or --export-slides DIR
  std::string panel = "window";
  std::string geometry;      // --geometry FILE.json: where the heatmap cells landed
  std::string lang;          // empty = from LANG
  std::string model;         // --model DIR: the checkpoint the model scenarios open
  std::string lesson;        // --lesson FILE: open that lesson (with --export-slides: its slides)
  int scale = 1;
  int batch = -1;            // -1 = the scenario's focus batch element
  int bench_frames = 0;
  int bench_edits = 0;       // --bench-edit N: edits timed until the frame that shows them
  std::string action;        // --action check-hidden|first-nan|try-view: press that button first
  float progress = 1.0f;     // --progress T: export mid-transition into --step (0..1)
  bool transparent = false;
  std::string experiment;    // --experiment NAME: with --panel experiments, run it first
  bool train_live = false;   // --train-live: with --bench-frames, train the model meanwhile
  bool force = false;        // --force: --export-slides may replace a folder that is not empty
};

// Throws attnsim::Error naming the bad argument.
Options parse_options(const std::vector<std::string>& args);
extern const char* const kUsage;

}  // namespace attnsim::app
