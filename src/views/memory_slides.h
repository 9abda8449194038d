// The memory strip as a figure (figure/memory_figure.h): a step's storage as a strip in
// storage order with its stride walk; a copy step shows the source strip above the new one.
// Two views of one builder:
//   memory_slide(...)   the slide: `--export --slide --panel memory`, lesson steps on the
//                       memory panel
//   memory_view(...)    the working memory panel's picture (panel_memory.cpp draws it through
//                       the ImGui sink), sized to the panel
#pragma once

#include <string>

#include "views/session.h"
#include "views/slide_scenes.h"
#include "figure/memory_figure.h"

namespace attnsim::app {

// The strips, headline and detail of `step` for batch element `batch` (what both views draw).
// The strips point into `run`. Throws Error (batch out of range).
figure::MemorySpec memory_spec(const RunData& run, const Step& step, int64_t batch, lessons::Lang lang);

// What the engine answers to view(B, T, d) on `t` (the memory panel's button, the slide's
// "try-view" action): its error, or the shape it gave.
std::string try_view_answer(const RunData& run, const Tensor& t, lessons::Lang lang);

// The slide of view.step (the scenario's focus step when empty). A step the run skipped or
// never reached gets step_slide's explanation page. With view.action "try-view" on a step
// that is not contiguous, the detail line says what the engine answers to view(B, T, d)
// (the memory panel's button). Throws Error for an unknown step.
figure::Figure memory_slide(const Scenario& scenario, const RunData& run, const SlideView& view);

struct MemoryViewSpec {
  const RunData* run = nullptr;
  const Step* step = nullptr;       // a step of run with a defined output
  int64_t batch = 0;
  float width = 1280, height = 400; // figure units (the panel's pixels / its scale)
  lessons::Lang lang = lessons::Lang::En;
  std::string theme = "projector";
  std::string answer;               // the button's try_view_answer, shown as the detail line
  float arrived = 1;                // a copy: the fraction of the new strip written so far
};

struct MemoryView {
  figure::Figure figure;
  figure::MemoryLayout layout;      // strips, wrap, first storage index, walked cells
};
MemoryView memory_view(const MemoryViewSpec& spec);

}  // namespace attnsim::app
