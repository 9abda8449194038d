// Command-line options of attnsim. Pure parsing, tested without a window.
//
//   attnsim [--scenario NAME] [--lang ko|en] [--ui-scale S]         the window (no --scenario: the start view)
//   attnsim --version                                               version, BLAS kernels and their advice
//   attnsim --export FILE.png [--scenario NAME] [--step NAME] [--scale 1|2|4]
//           [--panel window|tensor|pipeline|memory|buglab|flash|controls|model|timeline|experiments|
//                    sampling|overview]  (sampling: [--temperature T] [--top-k K] [--top-p P] [--seed S])
//           [--experiment NAME]
//           [--model DIR] [--batch B] [--layer L] [--ablate 1.2,0.3] [--text "..."]
//           [--transparent] [--geometry FILE.json] [--progress T] [--click X,Y]  one PNG, then exit
//   attnsim --export FILE.{svg,pdf} | --export FILE.png --slide     the step as a slide (no window)
//   attnsim --export-slides DIR [--force] [--scenario NAME | --lesson FILE] [--format png|svg|pdf]
//                                                                   title page + one slide per step
//   attnsim --export-gif FILE.gif | --export-frames DIR --from STEP --to STEP [--fps N]
//           [--seconds S] [--reduced-motion]                        the transition, animated
//   attnsim --bench-frames N [--scenario NAME] [--train-live]      median / p95 frame ms
//   attnsim --bench-edit N [--scenario NAME]                       median / p95 edit -> new frame ms
//   attnsim --print-trace [--scenario NAME]                         the run's trace as JSON (no window),
//                                                                   as the page logs it with #...&log=trace
// Slides and animations go through src/figure (Cairo, no OpenGL): --theme print|projector,
// --size 1280x720|1920x1080 (any 16:9), times --scale.
#pragma once

#include <string>
#include <vector>

namespace attnsim::app {

enum class Mode { Window, Export, ExportSlides, ExportGif, ExportFrames, Bench, BenchEdit, PrintTrace, Help, Version };

struct Options {
  Mode mode = Mode::Window;
  std::string scenario = "default";
  bool scenario_given = false;  // --scenario named one; else a window opens on the start view
  std::string step;          // empty = the scenario's focus step
  std::string output;        // --export FILE or --export-slides DIR
  std::string panel = "window";
  std::string geometry;      // --geometry FILE.json: where the heatmap cells landed
  std::string lang;          // empty = from LANG
  std::string model;         // --model DIR: the checkpoint the model scenarios open
  std::string hub_model;     // --model ORG/NAME in a window: opened through File > Open from
                             // Hugging Face…, with its progress bar (main.cpp)
  // A Hugging Face folder as --model (config.json): the layer on screen, heads knocked out
  // ("1.2,0.3"), the text. Refused with any other model.
  int layer = -1;            // -1 = layer 0
  std::string ablate;
  std::string text;
  // --panel sampling: the chart at these settings (model/sampling.h; checked when exported).
  double temperature = 0;    // 0 = greedy
  int top_k = 0;             // 0 = off
  double top_p = 1.0;        // 1 = off
  int seed = 0;
  std::string lesson;        // --lesson FILE: open that lesson (with --export-slides: its slides)
  int lesson_at = 0;         // --at N: the lesson's step N (1-based; 0 = where the learner left it)
  int scale = 1;
  int batch = -1;            // -1 = the scenario's focus batch element
  int head = 0;              // --head: the head a flash / bug-lab slide shows
  int bench_frames = 0;
  int bench_edits = 0;       // --bench-edit N: edits timed until the frame that shows them
  std::string action;        // --action check-hidden|first-nan|try-view|measure-flash|show-contribution|open-overview|
                             // open-sampling|open-lens: press that button (or open that model panel tab) first
  float click_x = -1, click_y = -1;  // --click X,Y: a left click there (window pixels) before the export
  float progress = 1.0f;     // --progress T: export mid-transition into --step (0..1)
  bool transparent = false;
  std::string experiment;    // --experiment NAME: with --panel experiments, run it first
  bool train_live = false;   // --train-live: with --bench-frames, train the model meanwhile
  bool force = false;        // --force: --export-slides may replace a folder that is not empty
  // Figures (slides, decks, animations).
  bool slide = false;        // --slide: --export FILE.png as a slide (svg and pdf always are)
  std::string format = "png";  // --export-slides: png | svg | pdf (one deck, lesson.pdf)
  std::string theme = "print";  // print | projector
  int width = 1280, height = 720;  // --size WxH (16:9), before --scale
  std::string from, to;      // --export-gif / --export-frames: the steps it moves between
  int fps = 12;
  float seconds = 3.0f;
  bool reduced_motion = false;  // three still frames instead of motion
  // The interface: --ui-scale S (text, spacing and figures together, 1 to 3; 0 = the window's
  // saved text size, 1 headless) and --window WxH (a headless export's or bench's window).
  float ui_scale = 0;
  int window_width = 1280, window_height = 800;

  // True when --export writes through the figure sinks (no window needed).
  bool figure_export() const;
};

// Throws attnsim::Error naming the bad argument.
Options parse_options(const std::vector<std::string>& args);
extern const char* const kUsage;

}  // namespace attnsim::app
