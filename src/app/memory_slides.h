// The memory panel as a slide (figure/memory_figure.h): a step's storage as a strip in
// storage order with its stride walk; a copy step shows the source strip above the new one.
// What `--export --slide --panel memory` and lesson steps on the memory panel draw.
#pragma once

#include "app/session.h"
#include "app/slide_scenes.h"

namespace attnsim::app {

// The slide of view.step (the scenario's focus step when empty). A step the run skipped or
// never reached gets step_slide's explanation page. With view.action "try-view" on a step
// that is not contiguous, the detail line says what the engine answers to view(B, T, d)
// (the memory panel's button). Throws Error for an unknown step.
figure::Figure memory_slide(const Scenario& scenario, const RunData& run, const SlideView& view);

}  // namespace attnsim::app
