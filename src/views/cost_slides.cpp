// A lesson step's engine figures as a table figure. See cost_slides.h.
#include "views/cost_slides.h"

#include "figure/number_cards.h"
#include "figure/palette.h"
#include "figure/slide.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

fig::TableSpec cost_table(const std::vector<StepFigure>& figures, lessons::Lang lang) {
  const bool ko = lang == lessons::Lang::Ko;
  fig::TableSpec t;
  t.header = {ko ? "수치" : "what", ko ? "크기" : "sizes", ko ? "엔진의 값" : "the engine's value"};
  t.align = {fig::Anchor::Start, fig::Anchor::Start, fig::Anchor::End};
  t.bold = {false, false, true};
  t.more_rows = ko ? "행 더" : "more rows";
  for (const StepFigure& f : figures) t.rows.push_back({figure_label(f.quantity, lang), f.sizes, f.value});
  return t;
}

figure::Figure cost_slide(const std::vector<StepFigure>& figures, const SlideView& view, const std::string& footer) {
  const bool ko = view.lang == lessons::Lang::Ko;
  const fig::Theme& th = fig::theme_by_name(view.theme);
  fig::SlideSpec spec;
  spec.title = view.title.empty() ? (ko ? "엔진이 계산한 수치" : "Figures computed by the engine") : view.title;
  spec.caption = view.caption;
  spec.footer = footer;
  spec.has_legend = false;
  fig::Slide s = fig::make_slide(spec, th);
  const fig::TableSpec table = cost_table(figures, view.lang);
  if (!fig::add_number_cards(s.figure, th, s.visual, table)) fig::add_table(s.figure, th, s.visual, table);
  s.figure.kind = "cost";
  return s.figure;
}

CostView cost_view(const std::vector<StepFigure>& figures, lessons::Lang lang, const std::string& theme, float width) {
  const fig::Theme& th = fig::theme_by_name(theme);
  fig::TableSpec t = cost_table(figures, lang);
  t.largest = fig::kLabelMin;  // the UI's text size (the panel's scale makes 28 units that)
  t.spread = false;
  const float pad = 12;
  CostView v;
  // every row: a table taller than any step states (the rows are packed from the top)
  auto lay_out = [&](float w) {
    v.figure = {};
    v.figure.width = w;
    v.figure.background = th.background;
    v.figure.theme = th.name;
    v.figure.title = lang == lessons::Lang::Ko ? "엔진이 계산한 수치" : "Figures computed by the engine";
    v.layout = fig::add_table(v.figure, th, {pad, pad, w - 2 * pad, 100000}, t);
  };
  lay_out(width);
  // Too narrow for the sizes and values beside the names: wider, and the panel scales it
  // down, rather than names squeezed to nothing and rows drawn over each other.
  if (v.layout.fits_width > width - 2 * pad) lay_out(v.layout.fits_width + 2 * pad);
  v.figure.height = v.layout.bottom + pad;
  return v;
}

}  // namespace attnsim::app
