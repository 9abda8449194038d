// The figure description's helpers. See figure.h.
#include "figure/figure.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "figure/text_metrics.h"

namespace attnsim::figure {

Mark mark_of(float v) {
  if (std::isnan(v)) return Mark::NaN;
  if (std::isinf(v)) return v < 0 ? Mark::NegInf : Mark::PosInf;
  return Mark::None;
}

bool Heatmap::as_image() const { return rows * cols > kImageCells; }

Text& Figure::text(float x, float y, std::string s, float size, Color c, Anchor a, bool bold,
                   std::string role) {
  items.emplace_back(Text{x, y, font_safe(s), size, c, a, bold, std::move(role)});
  return std::get<Text>(items.back());
}

Box& Figure::box(const Rect& r, Color fill, Color stroke, float stroke_width) {
  items.emplace_back(Box{r, fill, stroke, stroke_width, Mark::None});
  return std::get<Box>(items.back());
}

Line& Figure::line(float x1, float y1, float x2, float y2, Color c, float width, bool arrow) {
  items.emplace_back(Line{x1, y1, x2, y2, c, width, arrow, false});
  return std::get<Line>(items.back());
}

Band& Figure::band(Band b) {
  items.emplace_back(std::move(b));
  return std::get<Band>(items.back());
}

Heatmap& Figure::heatmap(Heatmap h) {
  items.emplace_back(std::move(h));
  return std::get<Heatmap>(items.back());
}

int pixel_height(const Figure& f, int width) {
  return std::max(1, static_cast<int>(std::lround(static_cast<double>(width) * f.height / f.width)));
}

}  // namespace attnsim::figure
