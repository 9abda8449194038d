// Charts as figure items: line plots (a training log's curves against the step) and grouped
// bar charts (a number before and after a change). Builders in the style of tensor_figure.h:
// each appends items inside a rectangle and says where it put them, so tests can check that
// a drawn point is the value it stands for.
//
//   add_line_plot(f, theme, area, plot)   axes box, 3 ticks per axis, shaded bands (a spread
//                                         over runs) under one polyline per series (Line
//                                         segments), horizontal levels (a baseline) and
//                                         vertical markers with labels, a legend under the
//                                         axes (rows as needed)
//   add_bar_chart(f, theme, area, chart)  groups of bars from 0 (up or down), the value beyond
//                                         each bar's end,
//                                         group names under the axis, a legend under them
//
// Every label is >= kLabelMin (28 units: readable on a projector at 1080p); a label that does
// not fit is cut with "…" (fit_text), marker labels that would collide move down a row.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "figure/figure.h"
#include "figure/palette.h"

namespace attnsim::figure {

struct Series {
  std::string label;  // legend entry; "" = not in the legend
  Color color;
  std::vector<std::pair<double, double>> points;  // (x, y) in drawing order
  float width = 3;
};

// A vertical line at x across the axes, its label at the top.
struct Marker {
  double x = 0;
  std::string label;
  Color color;
  bool dashed = false;
};

inline constexpr size_t kNoItem = static_cast<size_t>(-1);  // a layout's "no item here"

// A shaded band between two curves (min .. max over the seeds of one recipe), drawn under
// the series.
struct BandSeries {
  std::string label;  // legend entry (a box swatch); "" = not in the legend
  Color color;        // the fill: opaque, a tint on the background (no seams where it folds)
  std::vector<std::array<double, 3>> points;  // (x, lo, hi) in drawing order
};

// A horizontal line across the axes at y (a baseline: the uniform guess's loss), dashed, its
// label over it at the right end (or under it, or at the left end, where the marker labels
// leave room; in a plot too short for any of those, in the legend with a dashed swatch).
struct Level {
  double y = 0;
  std::string label;
  Color color;
};

struct LinePlot {
  std::string title;                 // above the axes
  double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;  // the axes' ranges (values outside are clamped)
  std::string x_unit;                // after the last x tick: "step 3000"
  std::vector<BandSeries> bands;     // drawn first, in the legend first
  std::vector<Series> series;
  std::vector<Level> levels;
  std::vector<Marker> markers;
  float y_label_w = 0;               // room for the y tick labels (0: what they need); plots
                                     // stacked in a column pass the widest so their axes line up
};
// The room a plot's y tick labels need.
float y_label_width(const LinePlot& plot);

// Where a line plot went: the axes' box and the items of each series and marker, so a test
// can map a drawn segment back to the value it shows.
struct PlotLayout {
  Rect axes;
  double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  float x_at(double x) const;  // figure units of a value (clamped to the axes)
  float y_at(double y) const;
  // Per series: the first Line item and how many (points - 1 segments, drawn in order).
  std::vector<std::pair<size_t, size_t>> series_lines;
  std::vector<size_t> marker_lines;  // per marker: its Line item
  std::vector<size_t> band_items;    // per band: its Band item
  std::vector<size_t> level_lines, level_labels;  // per level: its Line and its Text (kNoItem: no label)
};

// Draws the plot inside `area`. Throws Error for an empty or inverted range.
PlotLayout add_line_plot(Figure& f, const Theme& theme, const Rect& area, const LinePlot& plot);

struct BarGroup {
  std::string name;            // under the axis: "repeat accuracy"
  std::vector<double> values;  // one per BarChart::bars entry; NaN = no bar
};
struct BarChart {
  std::string title;
  std::vector<std::pair<std::string, Color>> bars;  // legend: ("as trained", blue), ...
  std::vector<BarGroup> groups;
  double y_lo = 0, y_hi = 1;  // the axis: bottom <= 0 <= top; bars start at 0 (down for negatives)
  // The text above each bar: value * value_scale with `decimals` digits, then `suffix`
  // (percent: scale 100, suffix " %").
  int decimals = 2;
  double value_scale = 1;
  std::string suffix;
  bool legend = true;  // false: a chart beside another with the same bars says it once
  // Baselines across the axes over the bars (chance accuracy, the uniform guess's loss),
  // dashed, each label over its line at the right end (under it where the top is too close;
  // none for an empty label).
  std::vector<Level> levels;
};

struct BarLayout {
  Rect axes;
  double y_lo = 0, y_hi = 1;
  float y_at(double v) const;  // figure units of a value (clamped to the axis)
  // Per group, per bar: the Box item of the bar (npos for a NaN value) and its value text.
  std::vector<std::vector<size_t>> bar_boxes, bar_texts;
  std::vector<size_t> level_lines, level_labels;  // per level: its Line and its Text
};
// Draws the chart inside `area`. Throws Error when the axis does not hold 0 (y_lo <= 0 <= y_hi,
// y_lo < y_hi) or a group's value count differs from the number of bars.
BarLayout add_bar_chart(Figure& f, const Theme& theme, const Rect& area, const BarChart& chart);
// The height the chart's legend takes at the bottom of an area `width` wide (0 without one):
// charts stacked in a column give the one with the legend that much more.
float bar_legend_height(const BarChart& chart, float width);

// Short tick text: 0, 0.5, 1, 2.3, 3000, 1.5e+04.
std::string tick_text(double v);
// Round numbers inside [lo, hi] (lo < hi): the multiples of the smallest step of 1, 2 or 5
// x 10^k that leaves at most 4 intervals, e.g. 0, 5, 10 for 0 .. 13.8 and 0, 0.5, 1 for 0 .. 1.
std::vector<double> nice_ticks(double lo, double hi);

}  // namespace attnsim::figure
