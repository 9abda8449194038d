// The Cairo sink: a Figure to pixels (PNG, RGBA for GIF frames and tests) or to PDF pages.
// Text goes through Cairo's font engine with NanumGothic, so PDF text stays text: selectable,
// searchable, Korean included (the font subset is embedded).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "figure/figure.h"

typedef struct _cairo cairo_t;

namespace attnsim::figure {

// Draws `f` into a Cairo context whose user space is device units; `scale` = device units
// per figure unit.
void draw_cairo(const Figure& f, cairo_t* cr, double scale);

// width x height RGBA pixels, top row first (height = pixel_height(f, width)).
std::vector<uint8_t> render_rgba(const Figure& f, int width);

// PNG of `width` pixels, written whole through engine/atomic_file.h (temp file + rename).
// False with a one-line `error` (starting with the path) on failure; PDF likewise.
bool write_png(const Figure& f, const std::string& path, int width, std::string* error);

// One page per figure; pages are 960 x 540 pt for a 16:9 slide (13.33 x 7.5 in).
bool write_pdf(const std::vector<Figure>& pages, const std::string& path,
               const std::string& title, std::string* error);

}  // namespace attnsim::figure
