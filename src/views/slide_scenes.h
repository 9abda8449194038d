// Slides of the simulator's views as figures (src/figure), without a window: what
// `--export FILE.{png,svg,pdf}`, `--export-slides`, `--export-gif` and the app's slide view
// draw. One description per slide; the Cairo, SVG and ImGui sinks draw the same one.
//
//   compute_run(scenario)                  the forward pass (and the bug lab's reference)
//   step_slide(scenario, run, view)        one step as a slide: tensor heads, bug triptych,
//                                          flash tile grid
//   scenario_deck / lesson_deck            a title page + one slide per active step / lesson step
//                                          (decode scenarios: per decode call, decode_slides.h)
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "views/session.h"
#include "figure/figure.h"
#include "figure/tensor_figure.h"
#include "lessons/lesson.h"

namespace attnsim::app {

// The Korean or the English text of a figure's words.
inline const char* in_lang(lessons::Lang lang, const char* ko, const char* en) {
  return lang == lessons::Lang::Ko ? ko : en;
}

// "head " or "헤드 ": the word before a head's number on a figure.
inline const char* head_word(lessons::Lang lang) { return in_lang(lang, "헤드 ", "head "); }

// The forward pass a Session would compute (synchronously; throws Error).
std::shared_ptr<const RunData> compute_run(const Scenario& scenario);

struct SlideView {
  std::string step;           // empty = the scenario's focus step
  int64_t batch = -1;         // -1 = the scenario's focus batch element
  std::string panel = "tensor";  // "buglab": correct / with the bug / difference;
                                 // "flash": the tile grid with m and l (flash_slides.h)
                                 // "memory": the storage strip and its walk (memory_slides.h)
  int64_t head = 0;           // the head the bug lab triptych and the flash grid show
  int64_t tile_q = -1, tile_k = -1;  // flash: the tile shown (a lesson step's); -1 = the last event
  std::string action;         // a lesson step's button ("try-view": the memory slide shows the
                              // engine's answer to view(B, T, d))
  lessons::Lang lang = lessons::Lang::En;
  std::string theme = "print";
  std::string title, caption;  // empty = the step's own
};

// One slide. Throws Error for an unknown step.
figure::Figure step_slide(const Scenario& scenario, const RunData& run, const SlideView& view);

// One cell of the bug lab's difference: bug - correct; 0 where both are the same (NaN and
// NaN, the same inf), NaN where exactly one side is NaN, the bug's value where one is inf.
float buglab_difference(float bug, float correct);
// The bug lab's triptych of one head of a step (the buglab slide's and the bug lab panel's
// blocks): the correct run, the run with the bug (one shared scale), their difference
// (buglab_difference, diverging). Empty when the run has no reference, either side skipped
// the step or their shapes differ.
std::vector<figure::Block> buglab_blocks(const RunData& run, const std::string& step, int64_t batch, int64_t head,
                                         lessons::Lang lang);
// A step's row / column labels: query tokens down (key tokens for the key side), key tokens
// (scores-like steps) or feature indices across.
figure::AxisLabels step_axis_labels(const RunData& run, const std::string& step, const Tensor& t, int64_t batch,
                                    lessons::Lang lang);
// Whether a computed (B, T, d) step's d columns are the h heads' slices: the projections
// (the view that follows cuts them so) and ctx_concat, out only when W_O is the identity
// (W_O mixes every head into every column). The tensor panel and the slides mark them.
bool columns_are_heads(const RunData& run, const Step& step);
// A legend's words in the slide's language: a mask's bar ends read "보임" / "가림" in Korean.
figure::Legend legend_in_lang(figure::Legend legend, lessons::Lang lang);
// A title page: big title, summary, a line of what follows.
figure::Figure title_slide(const std::string& title, const std::string& summary, const std::string& footer,
                           const std::string& theme);

// The one-sentence caption of a step (what the step does), in ko or en.
std::string step_caption(const std::string& step, lessons::Lang lang);

struct DeckPage {
  std::string name;    // file stem: "00-title", "01-query", ...
  std::string title;   // for index.md / index.html
  figure::Figure figure;
};
struct Deck {
  std::string title;
  std::vector<DeckPage> pages;  // the title page first
};
// The folder a model scenario opens: `given` (--model, a lesson step's checkpoint), else the one
// the window opens (model_view.h start_model_dir, the language model), so that
// `--export --scenario model` draws the model the window shows.
std::string scenario_model_dir(const std::string& given);
// The title page plus every active (not skipped) step of the scenario. A model scenario
// (model_view.h is_model_scenario) gives its head grid slide and its run's training curves of
// `model_dir` ("" = the window's model, scenario_model_dir); a decode scenario on the trained
// model decodes with `model_dir` ("" = the shipped checkpoint).
Deck scenario_deck(const std::string& scenario, lessons::Lang lang, const std::string& theme,
                   const std::string& model_dir = "");
// A model scenario's head grid slide: the checkpoint at `model_dir` ("" = the window's) on
// its sequence, the induction heads knocked out for model-ablate-induction.
figure::Figure model_scenario_slide(const std::string& scenario, const std::string& model_dir, lessons::Lang lang,
                                    const std::string& theme);
// The run's training curves (the timeline slide) of the checkpoint at `model_dir`, its step
// marked; throws Error when its run has no log.
figure::Figure model_timeline_slide(const std::string& scenario, const std::string& model_dir, lessons::Lang lang,
                                    const std::string& theme);
// One experiment (model::kExperimentNames) run on the checkpoint at `model_dir` as the app's
// Experiments tab runs it by default (kExperimentSteps per model it trains), as its slide
// (experiment_figure.h). Throws Error for an unknown name.
figure::Figure model_experiment_slide(const std::string& experiment, const std::string& model_dir,
                                      lessons::Lang lang, const std::string& theme);
// The title page plus one slide per lesson step (each step's settings, view and short text):
// the step's panel chooses the figure: tensor / buglab heads, the flash tile grid, the memory
// strip, the cost table of the step's engine figures (cost_slides.h; also for a flash step
// whose claims are IO-model figures), the trained model's head grid with its loss / accuracy
// bars or its training curves (model_slides.h).
// `progress`, when given, hears (steps done, steps in all) before each step's page and at the
// end: the app's worker shows it.
Deck lesson_deck(const lessons::Lesson& lesson, lessons::Lang lang, const std::string& theme,
                 const std::function<void(size_t, size_t)>& progress = {});

}  // namespace attnsim::app
