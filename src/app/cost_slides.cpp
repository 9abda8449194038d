// A lesson step's engine figures as a slide. See cost_slides.h.
#include "app/cost_slides.h"

#include "figure/palette.h"
#include "figure/slide.h"
#include "figure/table_figure.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

figure::Figure cost_slide(const std::vector<StepFigure>& figures, const SlideView& view, const std::string& footer) {
  const bool ko = view.lang == lessons::Lang::Ko;
  const fig::Theme& th = fig::theme_by_name(view.theme);
  fig::SlideSpec spec;
  spec.title = view.title.empty() ? (ko ? "엔진이 계산한 수치" : "Figures computed by the engine") : view.title;
  spec.caption = view.caption;
  spec.footer = footer;
  spec.has_legend = false;
  fig::Slide s = fig::make_slide(spec, th);
  fig::TableSpec t;
  t.header = {ko ? "수치" : "what", ko ? "크기" : "sizes", ko ? "엔진의 값" : "the engine's value"};
  t.align = {fig::Anchor::Start, fig::Anchor::Start, fig::Anchor::End};
  t.bold = {false, false, true};
  t.more_rows = ko ? "행 더" : "more rows";
  for (const StepFigure& f : figures) t.rows.push_back({figure_label(f.quantity, view.lang), f.sizes, f.value});
  fig::add_table(s.figure, th, s.visual, t);
  return s.figure;
}

}  // namespace attnsim::app
