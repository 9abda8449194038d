// Slide layout: 16:9, a title, one large visual, a one-sentence caption, a legend, no
// widgets. Laid out in 1920 x 1080 units, so sizes read as pixels at 1080p: titles >= 48,
// body text and labels >= 28 (kLabelMin). Any output size scales the whole slide.
//
//   +--------------------------------------------------------------+
//   | Title (56, bold; shrinks to 48 before it is cut)             |
//   | [note line: label summaries when labels do not fit]          |
//   |                                                              |
//   |                 visual: the whole width                      |
//   |                                                              |
//   | caption (32, up to two lines)           legend (bar, marks)  |
//   +--------------------------------------------------------------+
#pragma once

#include <string>
#include <vector>

#include "figure/figure.h"
#include "figure/palette.h"

namespace attnsim::figure {

inline constexpr float kSlideWidth = 1920, kSlideHeight = 1080;
inline constexpr float kTitleSize = 56, kTitleMin = 48, kBodySize = 32, kLabelMin = 28;
inline constexpr float kMargin = 60;

// What the legend explains: one colour map with its range, and which marks appear.
struct Legend {
  ColorMapId map = ColorMapId::Viridis;
  float lo = 0, hi = 1;
  std::string what;            // "alpha", "scores (signed)", ...
  std::string lo_text, hi_text;  // the bar's end labels; empty: the numbers lo and hi (the
                                 // mask: "shown" and "hidden")
  bool nan = false, neginf = false, posinf = false;
};

struct SlideSpec {
  std::string title;
  std::string caption;         // one sentence; wraps to two lines at most
  std::string footer;          // small, bottom left: "attnsim · scenario default · step alpha"
  Legend legend;
  bool has_legend = true;
};

// A slide with its title, caption, legend and footer drawn; `visual` is the rectangle left
// for the one large visual.
struct Slide {
  Figure figure;
  Rect visual;
};
Slide make_slide(const SlideSpec& spec, const Theme& theme);

// Greedy word wrap at `width` units (words that are too long are cut with "…"); at most
// `max_lines` lines, the last one ending in "…" when text was left over.
std::vector<std::string> wrap_text(const std::string& text, float size, float width, int max_lines,
                                   bool bold = false);
// The text cut to `width` units with a trailing "…" when it does not fit.
std::string fit_text(const std::string& text, float size, float width, bool bold = false);

// A line given `room` units of width: drawn whole when it fits, else cut with "…" and marked
// `cut` (figure.h Text::room), so a test finds every line a layout was too small for.
Text& fitted_text(Figure& f, float x, float y, const std::string& text, float size, float room, Color c,
                  Anchor a = Anchor::Start, bool bold = false, std::string role = "label");

// The box a Text item covers (measured with text_width(); height 1.2 x size).
Rect text_box(const Text& t);
// Pairs of text items (indices into f.items) whose boxes overlap, and texts that stick out
// of the figure. Empty for a good layout: the tests assert it.
std::vector<std::pair<size_t, size_t>> overlapping_texts(const Figure& f);
std::vector<size_t> texts_outside(const Figure& f);
// Texts that do not show all their words: marked cut, ending in "…" (fit_text and wrap_text
// cut so), wider than their room (measured with text_width(), the sinks' metrics), or outside
// the figure. Empty for a slide that shows every label whole: the deck tests assert it.
std::vector<size_t> texts_cut(const Figure& f);

}  // namespace attnsim::figure
