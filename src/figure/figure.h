// Figures: one description, several sinks (matplotlib's figure / backend split).
//
// Index
//   [SECTION] Geometry and colour       Rect, Color, Mark
//   [SECTION] Items                     Text, Box, Line, Band, Heatmap
//   [SECTION] The figure                Figure
//
// A Figure is a flat display list in its own units (a slide is 1920 x 1080 units, so "28
// units" is 28 px at 1080p). It knows nothing about its output. The sinks walk the same list:
//   cairo_sink.h   PNG at any pixel size, PDF (one page or a deck; text stays text)
//   svg_sink.h     SVG written by hand: real <text> elements (Cairo's SVG surface would turn
//                  glyphs into paths), large heatmaps embedded as one PNG image
//   the app        src/app/figure_imgui.cpp draws it into an ImGui draw list
//
// How to add a figure (e.g. a head grid or a training curve):
//   1. write a builder `void add_my_thing(Figure& f, const Rect& area, ...)` that appends
//      items inside `area` (see tensor_figure.h: heads_figure fills any rectangle);
//   2. measure every label with text_width() (text_metrics.h) and put it only where it fits;
//      when labels do not fit, say so with one summary text (summarize_labels());
//   3. wrap it in a slide with make_slide() (slide.h): title, caption, legend, no widgets.
// Every sink and every test (no overlapping labels, SVG label count, PDF text) then works
// for it without more code.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace attnsim::figure {

// [SECTION] Geometry and colour -------------------------------------------------------------

struct Rect {
  float x = 0, y = 0, w = 0, h = 0;
  float right() const { return x + w; }
  float bottom() const { return y + h; }
  bool overlaps(const Rect& o) const {
    return x < o.right() && o.x < right() && y < o.bottom() && o.y < bottom();
  }
  bool contains(const Rect& o) const {
    return o.x >= x && o.y >= y && o.right() <= right() && o.bottom() <= bottom();
  }
};

// sRGB, 0..1.
struct Color {
  float r = 0, g = 0, b = 0, a = 1;
  bool operator==(const Color&) const = default;
};
Color rgb(unsigned hex, float alpha = 1.0f);  // 0xRRGGBB
Color mix(Color a, Color b, float t);          // a + (b - a)·t, opaque: a tint of b on a

// Non-finite values are marked by a pattern over a colour, so they survive grayscale print
// and colour-vision deficiency: NaN = cross-hatch, -inf = "/" stripes, +inf = dots.
enum class Mark : uint8_t { None, NaN, NegInf, PosInf };
Mark mark_of(float v);

// [SECTION] Items ----------------------------------------------------------------------------

enum class Anchor : uint8_t { Start, Middle, End };

// One line of text. (x, y): the anchor point; y is the vertical middle of the line.
// `role` says what it is ("title", "caption", "label", "legend", "note"): tests count labels
// by it and the slide layout checks that no two texts overlap.
struct Text {
  float x = 0, y = 0;
  std::string text;
  float size = 28;
  Color color;
  Anchor anchor = Anchor::Start;
  bool bold = false;
  std::string role = "note";
  // The width the layout gave the line (0: the figure's own). fitted_text (slide.h) fills it
  // and marks `cut` when the words did not fit and were shortened with "…": the slide tests
  // measure every line against its room and refuse a cut one (a slide never drops words).
  float room = 0;
  bool cut = false;
};

// A rectangle: filled, outlined or both; optionally patterned with a mark.
struct Box {
  Rect rect;
  Color fill{0, 0, 0, 0};
  Color stroke{0, 0, 0, 0};
  float stroke_width = 0;
  Mark mark = Mark::None;
};

// A straight line, optionally with an arrow head at (x2, y2).
struct Line {
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  Color color;
  float width = 2;
  bool arrow = false;
  bool dashed = false;
};

// A filled band between two curves over the same x's (a spread over runs: min..max per
// step): one polygon along `hi` left to right and back along `lo`, so a vector sink keeps it
// one shape.
struct Band {
  std::vector<float> x, lo, hi;  // figure units: x ascending, the two curves' y at each x
  Color fill;
};

enum class ColorMapId : uint8_t { Viridis, Cividis, Diverging, Mask };

// rows x cols values (row-major) drawn as cells filling `rect`. NaN / ±inf cells get their
// mark. Above kImageCells cells a vector sink embeds the heatmap as one image.
struct Heatmap {
  Rect rect;
  int64_t rows = 0, cols = 0;
  std::vector<float> values;
  ColorMapId map = ColorMapId::Viridis;
  float lo = 0, hi = 1;   // the colour map's ends (Diverging: -m .. m)
  Color gap;              // the colour between cells (the background)
  bool gaps = true;       // a thin gap between cells large enough to show one (false: a
                          // continuous bar, as the legend's colour ramp)
  bool as_image() const;
};
inline constexpr int64_t kImageCells = 64 * 64;

using Item = std::variant<Text, Box, Line, Band, Heatmap>;

// [SECTION] The figure -------------------------------------------------------------------------

struct Figure {
  float width = 1920, height = 1080;
  Color background{1, 1, 1, 1};
  std::string title;  // the SVG <title>, the PDF page's heading
  std::string theme = "print";  // palette.h: the colours of the NaN / ±inf marks
  // What the figure shows, named by its builder ("heads", "lens", "head-grid", ...; empty for
  // one that names none): a deck's test checks each slide against what its step opens.
  std::string kind;
  std::vector<Item> items;

  Text& text(float x, float y, std::string s, float size, Color c, Anchor a = Anchor::Start,
             bool bold = false, std::string role = "note");
  Box& box(const Rect& r, Color fill, Color stroke = {0, 0, 0, 0}, float stroke_width = 0);
  Line& line(float x1, float y1, float x2, float y2, Color c, float width = 2, bool arrow = false);
  Band& band(Band b);
  Heatmap& heatmap(Heatmap h);
};

// Pixel rows of a `width`-pixel image of `f` (its aspect ratio, rounded; at least 1).
int pixel_height(const Figure& f, int width);

}  // namespace attnsim::figure
