// A lesson step's engine figures as a table figure (figure/table_figure.h): what, the sizes it
// is computed at, the value. Two views of one table:
//   cost_slide(...)   the slide lesson steps on the cost panel get instead of a tensor, in
//                     projector-size type: up to three figures as number cards
//                     (figure/number_cards.h), more as the table
//   cost_view(...)    the lesson's Figures panel (panel_lesson.cpp draws it through the ImGui
//                     sink), rows packed at the UI's text size
#pragma once

#include <string>
#include <vector>

#include "views/lesson_figures.h"
#include "views/slide_scenes.h"
#include "figure/table_figure.h"

namespace attnsim::app {

// The table both views draw.
figure::TableSpec cost_table(const std::vector<StepFigure>& figures, lessons::Lang lang);

// view.title / view.caption / view.lang / view.theme are used; `footer` as given.
figure::Figure cost_slide(const std::vector<StepFigure>& figures, const SlideView& view, const std::string& footer);

struct CostView {
  figure::Figure figure;        // `width` units wide, as tall as its rows
  figure::TableLayout layout;   // each cell's text item (the panel's hover finds names by it)
};
CostView cost_view(const std::vector<StepFigure>& figures, lessons::Lang lang, const std::string& theme, float width);

}  // namespace attnsim::app
