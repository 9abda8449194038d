// A lesson step's engine figures as a slide (figure/table_figure.h): the Figures panel's
// table (what, the sizes it is computed at, the value) in projector-size type. What lesson
// steps on the cost panel get instead of a tensor.
#pragma once

#include <string>
#include <vector>

#include "app/lesson_figures.h"
#include "app/slide_scenes.h"

namespace attnsim::app {

// view.title / view.caption / view.lang / view.theme are used; `footer` as given.
figure::Figure cost_slide(const std::vector<StepFigure>& figures, const SlideView& view, const std::string& footer);

}  // namespace attnsim::app
