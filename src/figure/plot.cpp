// Line plots and bar charts as figure items. See plot.h.
#include "figure/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "engine/error.h"
#include "figure/slide.h"
#include "figure/text_metrics.h"

namespace attnsim::figure {

namespace {

constexpr float kRow = 40;       // one row of 28-unit labels
constexpr float kSwatch = 36;    // legend swatch length

// Legend entries flowed into rows of `width`; returns the rows' entries (indices) so the
// caller knows the height before drawing.
std::vector<std::vector<size_t>> legend_rows(const std::vector<std::string>& labels, float width) {
  std::vector<std::vector<size_t>> rows;
  float x = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].empty()) continue;
    const float w = kSwatch + 10 + std::min(text_width(labels[i], kLabelMin), width - kSwatch - 10) + 28;
    if (rows.empty() || x + w > width) {
      rows.emplace_back();
      x = 0;
    }
    rows.back().push_back(i);
    x += w;
  }
  return rows;
}

enum class Swatch : uint8_t { Box, Line, Dashed };  // a bar or band, a series, a level

void draw_legend(Figure& f, const Theme& th, float x0, float y0, float width, const std::vector<std::vector<size_t>>& rows,
                 const std::vector<std::string>& labels, const std::vector<Color>& colors,
                 const std::vector<Swatch>& swatches) {
  for (size_t r = 0; r < rows.size(); ++r) {
    float x = x0;
    const float y = y0 + kRow * static_cast<float>(r) + kRow / 2;
    for (size_t i : rows[r]) {
      if (swatches[i] == Swatch::Box) f.box({x, y - 12, kSwatch, 24}, colors[i]);
      else f.line(x, y, x + kSwatch, y, colors[i], swatches[i] == Swatch::Dashed ? 3 : 5).dashed = swatches[i] == Swatch::Dashed;
      const std::string text = fit_text(labels[i], kLabelMin, width - kSwatch - 10);
      f.text(x + kSwatch + 10, y, text, kLabelMin, th.text, Anchor::Start, false, "legend");
      x += kSwatch + 10 + text_width(text, kLabelMin) + 28;
    }
  }
}

}  // namespace

std::string tick_text(double v) {
  char b[32];
  const double a = std::fabs(v);
  if (v == 0) return "0";
  if (a >= 1e5 || a < 1e-3) std::snprintf(b, sizeof b, "%.1e", v);
  else if (a >= 100 || std::fabs(v - std::round(v)) < 1e-9) std::snprintf(b, sizeof b, "%.0f", v);
  else std::snprintf(b, sizeof b, "%.2g", v);
  return b;
}

// See plot.h (matplotlib's MaxNLocator, simplified): a range of 0..13.8 gets 0, 5, 10, not
// 0, 6.9, 13.8.
std::vector<double> nice_ticks(double lo, double hi) {
  const double span = hi - lo;
  const double base = std::pow(10.0, std::floor(std::log10(span / 4)));
  double step = 10 * base;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (span / (m * base) <= 4 + 1e-9) {
      step = m * base;
      break;
    }
  std::vector<double> out;
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1)
    out.push_back(std::fabs(k * step) < step * 1e-9 ? 0.0 : k * step);
  return out;
}

// [SECTION] line plot ------------------------------------------------------------------------

float PlotLayout::x_at(double x) const {
  const double t = std::clamp((x - x_lo) / (x_hi - x_lo), 0.0, 1.0);
  return axes.x + static_cast<float>(t) * axes.w;
}

float PlotLayout::y_at(double y) const {
  const double t = std::clamp((y - y_lo) / (y_hi - y_lo), 0.0, 1.0);
  return axes.bottom() - static_cast<float>(t) * axes.h;
}

float y_label_width(const LinePlot& p) {
  float w = 0;
  if (p.y_hi > p.y_lo)
    for (double v : nice_ticks(p.y_lo, p.y_hi)) w = std::max(w, text_width(tick_text(v), kLabelMin));
  return w;
}

namespace {

// One layout of the plot; with `levels_in_legend` the levels' labels go into the legend
// instead of over their lines. *unplaced: a level label found no free room over its line.
PlotLayout line_plot_once(Figure& f, const Theme& th, const Rect& area, const LinePlot& p, bool levels_in_legend,
                          bool* unplaced) {
  if (!(p.x_hi > p.x_lo) || !(p.y_hi > p.y_lo) || !std::isfinite(p.x_hi - p.x_lo) || !std::isfinite(p.y_hi - p.y_lo))
    throw Error("plot '" + p.title + "': the axis range is empty");
  PlotLayout L;
  L.x_lo = p.x_lo;
  L.x_hi = p.x_hi;
  L.y_lo = p.y_lo;
  L.y_hi = p.y_hi;

  std::vector<double> y_ticks = nice_ticks(p.y_lo, p.y_hi);
  const float tick_w = std::max(p.y_label_w, y_label_width(p));
  std::vector<std::string> labels;
  std::vector<Color> colors;
  std::vector<Swatch> swatches;
  for (const BandSeries& b : p.bands) {
    labels.push_back(b.label);
    colors.push_back(b.color);
    swatches.push_back(Swatch::Box);
  }
  for (const Series& s : p.series) {
    labels.push_back(s.label);
    colors.push_back(s.color);
    swatches.push_back(Swatch::Line);
  }
  if (levels_in_legend)
    for (const Level& lv : p.levels) {
      labels.push_back(lv.label);
      colors.push_back(lv.color);
      swatches.push_back(Swatch::Dashed);
    }
  const auto rows = legend_rows(labels, area.w);
  const float legend_h = kRow * static_cast<float>(rows.size());
  L.axes = {area.x + tick_w + 12, area.y + kRow + 20, 0, 0};
  L.axes.w = area.right() - 4 - L.axes.x;
  L.axes.h = area.bottom() - legend_h - kRow - L.axes.y;
  if (L.axes.w < 40 || L.axes.h < 40) throw Error("plot '" + p.title + "': the area is too small");

  f.text(L.axes.x, area.y + 18, fit_text(p.title, kLabelMin, area.right() - L.axes.x, true), kLabelMin, th.text,
         Anchor::Start, true, "label");
  f.box(L.axes, {0, 0, 0, 0}, th.frame, 1.5f);
  // A short plot keeps every other tick until its labels have a line each.
  while (y_ticks.size() > 2 &&
         L.axes.h * static_cast<float>((y_ticks[1] - y_ticks[0]) / (p.y_hi - p.y_lo)) < kLabelMin * 1.3f) {
    std::vector<double> every_other;
    for (size_t i = 0; i < y_ticks.size(); i += 2) every_other.push_back(y_ticks[i]);
    y_ticks = every_other;
  }
  for (double v : y_ticks) {
    const float y = L.y_at(v);
    if (v != p.y_lo) f.line(L.axes.x, y, L.axes.right(), y, mix(th.background, th.text, 0.15f), 1);  // shows in both themes
    f.text(L.axes.x - 8, y, tick_text(v), kLabelMin, th.muted, Anchor::End, false, "label");
  }
  // x ticks: the ends (the last with the unit), and the round numbers between them whose
  // labels fit without touching a neighbour.
  const float ty = L.axes.bottom() + 24;
  const Text& lo = f.text(L.axes.x, ty, tick_text(p.x_lo), kLabelMin, th.muted, Anchor::Start, false, "label");
  float left_edge = text_box(lo).right();
  const std::string hi_text = (p.x_unit.empty() ? "" : p.x_unit + " ") + tick_text(p.x_hi);
  const Text& hi = f.text(L.axes.right(), ty, hi_text, kLabelMin, th.muted, Anchor::End, false, "label");
  const float right_edge = text_box(hi).x;
  for (double v : nice_ticks(p.x_lo, p.x_hi)) {
    Text t{L.x_at(v), ty, tick_text(v), kLabelMin, th.muted, Anchor::Middle, false, "label"};
    const Rect b = text_box(t);
    if (b.x <= left_edge + 24 || b.right() >= right_edge - 24) continue;
    f.items.emplace_back(t);
    left_edge = b.right();
  }

  for (const BandSeries& b : p.bands) {
    L.band_items.push_back(f.items.size());
    Band& band = f.band({{}, {}, {}, b.color});
    for (const auto& [x, lo, hi] : b.points) {
      band.x.push_back(L.x_at(x));
      band.lo.push_back(L.y_at(lo));
      band.hi.push_back(L.y_at(hi));
    }
  }
  for (const Series& s : p.series) {
    const size_t first = f.items.size();
    for (size_t i = 1; i < s.points.size(); ++i)
      f.line(L.x_at(s.points[i - 1].first), L.y_at(s.points[i - 1].second), L.x_at(s.points[i].first),
             L.y_at(s.points[i].second), s.color, s.width);
    L.series_lines.emplace_back(first, f.items.size() - first);
  }
  // Levels' lines under the markers' labels; the levels' labels last, where those leave room.
  for (const Level& lv : p.levels) {
    const float y = L.y_at(lv.y);
    L.level_lines.push_back(f.items.size());
    f.line(L.axes.x, y, L.axes.right(), y, lv.color, 2.5f).dashed = true;
  }
  // Markers: the line, then the label at the top, moved down a row while it would hit an
  // earlier marker's label.
  std::vector<Rect> placed;
  for (const Marker& m : p.markers) {
    const float x = L.x_at(m.x);
    L.marker_lines.push_back(f.items.size());
    Line& ln = f.line(x, L.axes.y, x, L.axes.bottom(), m.color, 3);
    ln.dashed = m.dashed;
    if (m.label.empty()) continue;
    const float room_right = L.axes.right() - x - 8, room_left = x - L.axes.x - 8;
    const bool right = room_right >= room_left;
    Text t{right ? x + 8 : x - 8, 0, fit_text(m.label, kLabelMin, std::max(room_right, room_left)), kLabelMin, m.color,
           right ? Anchor::Start : Anchor::End, true, "label"};
    for (int row = 0; row < 4; ++row) {
      t.y = L.axes.y + 22 + 36 * static_cast<float>(row);
      const Rect b = text_box(t);
      if (std::none_of(placed.begin(), placed.end(), [&](const Rect& r) { return r.overlaps(b); })) break;
    }
    const Rect b = text_box(t);
    placed.push_back(b);
    // On a light plate, so the label stays readable over the curves.
    Color plate = th.background;
    plate.a = 0.85f;
    f.box({b.x - 4, b.y, b.w + 8, b.h}, plate);
    f.items.emplace_back(t);
  }
  // A level's label: over its line at the right end; where a marker's label is in the way,
  // under the line, then at the left end.
  for (const Level& lv : p.levels) {
    const float y = L.y_at(lv.y);
    L.level_labels.push_back(kNoItem);
    if (lv.label.empty() || levels_in_legend) continue;
    const std::string text = fit_text(lv.label, kLabelMin, L.axes.w - 16);
    const float dy = kLabelMin * 0.5f + 6;
    for (const auto& [x, anchor, ty] : {std::tuple{L.axes.right() - 8, Anchor::End, y - dy},
                                       std::tuple{L.axes.right() - 8, Anchor::End, y + dy},
                                       std::tuple{L.axes.x + 8, Anchor::Start, y - dy},
                                       std::tuple{L.axes.x + 8, Anchor::Start, y + dy}}) {
      const Text t{x, ty, text, kLabelMin, lv.color, anchor, false, "label"};
      const Rect b = text_box(t);
      if (!L.axes.contains(b) || std::any_of(placed.begin(), placed.end(), [&](const Rect& r) { return r.overlaps(b); }))
        continue;
      placed.push_back(b);
      Color plate = th.background;
      plate.a = 0.85f;
      f.box({b.x - 4, b.y, b.w + 8, b.h}, plate);
      L.level_labels.back() = f.items.size();
      f.items.emplace_back(t);
      break;
    }
    if (L.level_labels.back() == kNoItem) *unplaced = true;
  }
  draw_legend(f, th, area.x, area.bottom() - legend_h, area.w, rows, labels, colors, swatches);
  return L;
}

}  // namespace

PlotLayout add_line_plot(Figure& f, const Theme& th, const Rect& area, const LinePlot& p) {
  const size_t start = f.items.size();
  bool unplaced = false;
  PlotLayout L = line_plot_once(f, th, area, p, false, &unplaced);
  if (!unplaced) return L;
  // A short plot whose marker labels cover the level's place: its label in the legend.
  f.items.erase(f.items.begin() + static_cast<std::ptrdiff_t>(start), f.items.end());
  return line_plot_once(f, th, area, p, true, &unplaced);
}

// [SECTION] bar chart ------------------------------------------------------------------------

BarLayout add_bar_chart(Figure& f, const Theme& th, const Rect& area, const BarChart& c) {
  if (!std::isfinite(c.y_hi) || !std::isfinite(c.y_lo) || c.y_lo > 0 || c.y_hi < 0 || !(c.y_hi > c.y_lo))
    throw Error("bar chart '" + c.title + "': the axis must run from at most 0 to at least 0, bottom below top");
  for (const BarGroup& g : c.groups)
    if (g.values.size() != c.bars.size())
      throw Error("bar chart '" + c.title + "': group '" + g.name + "' has " + std::to_string(g.values.size()) +
                  " values for " + std::to_string(c.bars.size()) + " bars");
  BarLayout L;
  L.y_lo = c.y_lo;
  L.y_hi = c.y_hi;
  std::vector<std::string> labels;
  std::vector<Color> colors;
  for (const auto& [name, color] : c.bars) {
    labels.push_back(name);
    colors.push_back(color);
  }
  const auto rows = c.legend ? legend_rows(labels, area.w) : std::vector<std::vector<size_t>>{};
  const float legend_h = kRow * static_cast<float>(rows.size());
  // The title wraps (a baseline's note after it can be long) rather than losing its end.
  const auto title = wrap_text(c.title, kLabelMin, area.w, 3, true);
  const float title_h = kRow * static_cast<float>(std::max<size_t>(1, title.size()) - 1);
  const float slot = area.w / static_cast<float>(std::max<size_t>(1, c.groups.size()));
  const float n = static_cast<float>(std::max<size_t>(1, c.bars.size()));
  const float gap = 10, bar_w = (slot * 0.84f - gap * (n - 1)) / n;
  const int decimals = std::clamp(c.decimals, 0, 6);
  auto value_text = [&](double v) {
    char buf[64];
    const double shown = v * c.value_scale;  // a value that rounds to zero says 0, not -0.0
    std::snprintf(buf, sizeof buf, "%.*f%s", decimals, std::fabs(shown) < 0.5 * std::pow(10.0, -decimals) ? 0.0 : shown,
                  c.suffix.c_str());
    return std::string(buf);
  };
  auto bar_x = [&](size_t g, size_t b) {
    return area.x + slot * static_cast<float>(g) + slot * 0.08f + static_cast<float>(b) * (bar_w + gap);
  };
  // A value text sits over its bar (under a negative one); one that would touch a text placed
  // before it goes a row further out, as many rows as it takes (wider than its bar, it may
  // reach over a neighbour's). Returns each bar's rows out (-1: no value).
  auto value_rows_out = [&](const BarLayout& at) {
    std::vector<Rect> placed;
    std::vector<int> out;
    for (size_t g = 0; g < c.groups.size(); ++g)
      for (size_t b = 0; b < c.bars.size(); ++b) {
        const double v = c.groups[g].values[b];
        if (!std::isfinite(v)) {
          out.push_back(-1);
          continue;
        }
        const float w = text_width(value_text(v), kLabelMin) + 8, cx = bar_x(g, b) + bar_w / 2, end = at.y_at(v);
        int k = 0;
        for (;; ++k) {
          const float y = v < 0 ? end + 20 + kRow * static_cast<float>(k) : end - 20 - kRow * static_cast<float>(k);
          const Rect r{cx - w / 2, y - kRow / 2 + 2, w, kRow - 4};
          if (k == 6 || std::none_of(placed.begin(), placed.end(), [&](const Rect& p) { return p.overlaps(r); })) {
            placed.push_back(r);
            break;
          }
        }
        out.push_back(k);
      }
    return out;
  };
  // The rows above the axes (and below, for negative bars) hold the raised texts: laid out
  // again with more rows until every text has its place.
  float value_rows = 1, below = 0;
  std::vector<int> raised;
  for (int pass = 0; pass < 4; ++pass) {
    // Room above the axes for a full-height bar's value text, and below them for a full-depth
    // negative bar's (then the group names go one row lower).
    below = c.y_lo < 0 ? kRow * value_rows : 0;
    L.axes = {area.x, area.y + title_h + kRow * value_rows + 40, area.w, 0};
    // the group names under the axis take a row and a little air above the legend
    L.axes.h = area.bottom() - legend_h - kRow - (c.legend ? 16 : 0) - below - L.axes.y;
    if (L.axes.h < 40 || c.groups.empty())
      throw Error("bar chart '" + c.title + "': the area is too small (" + std::to_string(static_cast<int>(area.w)) +
                  " x " + std::to_string(static_cast<int>(area.h)) + " units for " + std::to_string(title.size()) +
                  " title lines, " + std::to_string(rows.size()) + " legend rows, values on " +
                  std::to_string(static_cast<int>(value_rows)) + " rows)");
    raised = value_rows_out(L);
    const int most = raised.empty() ? 0 : *std::max_element(raised.begin(), raised.end());
    const float need = 1 + static_cast<float>(std::max(0, most));
    if (need <= value_rows) break;
    value_rows = need;
  }
  for (size_t i = 0; i < title.size(); ++i)
    fitted_text(f, area.x, area.y + 18 + kRow * static_cast<float>(i), title[i], kLabelMin, area.w, th.text,
                Anchor::Start, true, "label");
  const float zero = L.y_at(0);
  f.line(L.axes.x, zero, L.axes.right(), zero, th.frame, 2);

  for (size_t g = 0; g < c.groups.size(); ++g) {
    L.bar_boxes.emplace_back();
    L.bar_texts.emplace_back();
    for (size_t b = 0; b < c.bars.size(); ++b) {
      const double v = c.groups[g].values[b];
      if (!std::isfinite(v)) {
        L.bar_boxes.back().push_back(kNoItem);
        L.bar_texts.back().push_back(kNoItem);
        continue;
      }
      const float end = L.y_at(v), x = bar_x(g, b);
      L.bar_boxes.back().push_back(f.items.size());
      f.box({x, std::min(zero, end), bar_w, std::fabs(zero - end)}, c.bars[b].second);
      const float out = 20 + kRow * static_cast<float>(raised[g * c.bars.size() + b]);
      L.bar_texts.back().push_back(f.items.size());
      f.text(x + bar_w / 2, v < 0 ? end + out : end - out, value_text(v), kLabelMin, th.text, Anchor::Middle, false,
             "label");
    }
    fitted_text(f, L.axes.x + slot * (static_cast<float>(g) + 0.5f), L.axes.bottom() + below + 24, c.groups[g].name,
                kLabelMin, slot - 8, th.text, Anchor::Middle, false, "label");
  }
  for (const Level& lv : c.levels) {
    const float y = L.y_at(lv.y);
    L.level_lines.push_back(f.items.size());
    f.line(L.axes.x, y, L.axes.right(), y, lv.color, 2.5f).dashed = true;
    if (lv.label.empty()) {  // said elsewhere (the model slides: in the chart's title)
      L.level_labels.push_back(kNoItem);
      continue;
    }
    const float dy = kLabelMin * 0.5f + 6;
    Text t{L.axes.right() - 8, y - dy >= L.axes.y + dy ? y - dy : y + dy,
           fit_text(lv.label, kLabelMin, L.axes.w - 16), kLabelMin, lv.color, Anchor::End, false, "label"};
    const Rect b = text_box(t);
    Color plate = th.background;  // readable over a bar
    plate.a = 0.85f;
    f.box({b.x - 4, b.y, b.w + 8, b.h}, plate);
    L.level_labels.push_back(f.items.size());
    f.items.emplace_back(t);
  }
  draw_legend(f, th, area.x, area.bottom() - legend_h, area.w, rows, labels, colors, std::vector<Swatch>(labels.size(), Swatch::Box));
  return L;
}

float bar_legend_height(const BarChart& c, float width) {
  if (!c.legend) return 0;
  std::vector<std::string> labels;
  for (const auto& bar : c.bars) labels.push_back(bar.first);
  return kRow * static_cast<float>(legend_rows(labels, width).size()) + 16;
}

float BarLayout::y_at(double v) const {
  const double t = (std::clamp(v, y_lo, y_hi) - y_lo) / (y_hi - y_lo);
  return axes.bottom() - static_cast<float>(t) * axes.h;
}

}  // namespace attnsim::figure
