// The SVG sink, written by hand so that text is real <text> (selectable, searchable, Korean
// included; font-family NanumGothic with sans-serif as fallback). Heatmaps above kImageCells
// cells become one embedded PNG (one pixel per cell, drawn without smoothing), so the article's
// 128 x 512 view stays small. NaN / ±inf marks are SVG <pattern>s.
#pragma once

#include <string>

#include "figure/figure.h"

namespace attnsim::figure {

// The document as text; width/height are the nominal pixel size (the viewBox is the
// figure's own units).
std::string svg_document(const Figure& f, int width);
// Written whole through engine/atomic_file.h; false with a one-line `error`.
bool write_svg(const Figure& f, const std::string& path, int width, std::string* error);

}  // namespace attnsim::figure
