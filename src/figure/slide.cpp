// Slide layout. See slide.h.
#include "figure/slide.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "figure/text_metrics.h"

namespace attnsim::figure {

namespace {

constexpr float kCaptionLine = 44, kLegendLine = 36;

// Splits UTF-8 text into words at spaces (Korean words are space separated too).
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Drops the last UTF-8 character.
void pop_utf8(std::string& s) {
  while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
  if (!s.empty()) s.pop_back();
}

std::string short_number(float v) {
  char b[32];
  if (v != 0 && (std::fabs(v) >= 1e4f || std::fabs(v) < 1e-2f)) std::snprintf(b, sizeof b, "%.1e", v);
  else std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

// The legend's name over its bar: one line, or two (the second where the one was) when it is
// wider than the legend; the first then sits a row above the legend's band.
std::vector<std::string> legend_what_lines(const Legend& lg, float width) {
  return wrap_text(lg.what, kLabelMin, width, 2);
}

void add_legend(Figure& f, const Legend& lg, const Theme& th, const Rect& area) {
  // Colour bar: 64 samples as a one-row heatmap (small enough to stay cells in SVG).
  Heatmap bar;
  bar.rows = 1;
  bar.cols = lg.map == ColorMapId::Mask ? 2 : 64;
  for (int64_t i = 0; i < bar.cols; ++i)
    bar.values.push_back(static_cast<float>(i) / static_cast<float>(bar.cols - 1));
  bar.map = lg.map;
  bar.lo = 0;
  bar.hi = 1;
  bar.gap = th.background;
  bar.gaps = false;
  const float bar_w = std::min(area.w * 0.62f, 420.0f);
  bar.rect = {area.x, area.y + 34, bar_w, 30};
  const auto what = legend_what_lines(lg, area.w);
  for (size_t i = 0; i < what.size(); ++i)
    fitted_text(f, area.x, area.y + 12 - kLegendLine * static_cast<float>(what.size() - 1 - i), what[i], kLabelMin, area.w,
                th.muted, Anchor::Start, false, "legend");
  f.heatmap(bar);
  f.box(bar.rect, {0, 0, 0, 0}, th.frame, 1.5f);
  const float ty = bar.rect.bottom() + 22;
  const bool mask = lg.map == ColorMapId::Mask;
  const std::string lo = !lg.lo_text.empty() ? lg.lo_text : mask ? "shown" : short_number(lg.lo);
  const std::string hi = !lg.hi_text.empty() ? lg.hi_text : mask ? "hidden" : short_number(lg.hi);
  f.text(bar.rect.x, ty, lo, kLabelMin, th.text, Anchor::Start, false, "legend");
  f.text(bar.rect.right(), ty, hi, kLabelMin, th.text, Anchor::End, false, "legend");
  // Marks to the right of the bar, one per line from the bar's middle down (the name above
  // the bar may run over the bar's width).
  float x = bar.rect.right() + 36, y = bar.rect.y + bar.rect.h / 2;
  auto swatch = [&](bool on, Mark m, const char* name) {
    if (!on) return;
    Box& b = f.box({x, y - 15, 44, 30}, {0, 0, 0, 0}, th.frame, 1.5f);
    b.mark = m;
    f.text(x + 56, y, name, kLabelMin, th.text, Anchor::Start, false, "legend");
    y += 40;
  };
  swatch(lg.nan, Mark::NaN, "NaN");
  swatch(lg.neginf, Mark::NegInf, "-inf");
  swatch(lg.posinf, Mark::PosInf, "+inf");
}

}  // namespace

std::string fit_text(const std::string& text, float size, float width, bool bold) {
  if (text_width(text, size, bold) <= width) return text;
  std::string s = text;
  while (!s.empty() && text_width(s + "…", size, bold) > width) pop_utf8(s);
  return s + "…";
}

std::vector<std::string> wrap_text(const std::string& text, float size, float width, int max_lines, bool bold) {
  std::vector<std::string> lines;
  std::string cur;
  const auto words = words_of(text);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string next = cur.empty() ? words[i] : cur + " " + words[i];
    if (text_width(next, size, bold) <= width || cur.empty()) {
      cur = next;
      continue;
    }
    lines.push_back(fit_text(cur, size, width, bold));
    cur = words[i];
    if (static_cast<int>(lines.size()) == max_lines) {
      std::string rest = lines.back();
      for (size_t j = i; j < words.size(); ++j) rest += " " + words[j];
      lines.back() = fit_text(rest + " …", size, width, bold);
      if (lines.back().size() < 3 || lines.back().substr(lines.back().size() - 3) != "…")
        lines.back() = fit_text(lines.back() + "…", size, width, bold);
      return lines;
    }
  }
  if (!cur.empty()) lines.push_back(fit_text(cur, size, width, bold));
  return lines;
}

Slide make_slide(const SlideSpec& spec, const Theme& th) {
  Slide s;
  Figure& f = s.figure;
  f.width = kSlideWidth;
  f.height = kSlideHeight;
  f.background = th.background;
  f.theme = th.name;
  f.title = spec.title;
  const float inner = kSlideWidth - 2 * kMargin;
  float title_size = kTitleSize;
  while (title_size > kTitleMin && text_width(spec.title, title_size, true) > inner) title_size -= 2;
  fitted_text(f, kMargin, kMargin + 34, spec.title, title_size, inner, th.text, Anchor::Start, true, "title");
  f.line(kMargin, kMargin + 78, kSlideWidth - kMargin, kMargin + 78, th.accent, 3);
  // Bottom band: caption on the left, legend on the right, footer under both. The caption gets
  // every line it needs (three fit the band; more take room from the visual), and a legend
  // name of two lines one more row: a slide says all of its sentence, cut nowhere.
  const float legend_w = spec.has_legend ? 600 : 0;
  const float caption_w = inner - legend_w - (spec.has_legend ? 40 : 0);
  const auto lines = wrap_text(spec.caption, kBodySize, caption_w, 12);
  const float caption_extra = kCaptionLine * static_cast<float>(std::max<int>(0, static_cast<int>(lines.size()) - 3));
  const float legend_extra =
      spec.has_legend ? kLegendLine * static_cast<float>(std::max<size_t>(1, legend_what_lines(spec.legend, legend_w).size()) - 1)
                      : 0;
  const float band_top = kSlideHeight - kMargin - 150 - std::max(caption_extra, legend_extra);
  for (size_t i = 0; i < lines.size(); ++i)
    fitted_text(f, kMargin, band_top + 24 + static_cast<float>(i) * kCaptionLine, lines[i], kBodySize, caption_w,
                th.text, Anchor::Start, false, "caption");
  // the legend keeps its place over the footer; a second line of its name goes above it
  if (spec.has_legend)
    add_legend(f, spec.legend, th, {kSlideWidth - kMargin - legend_w, kSlideHeight - kMargin - 150, legend_w, 130});
  if (!spec.footer.empty())
    fitted_text(f, kMargin, kSlideHeight - kMargin / 2 - 4, spec.footer, 22, inner, th.muted, Anchor::Start, false,
                "footer");
  s.visual = {kMargin, kMargin + 100, inner, band_top - 20 - (kMargin + 100)};
  return s;
}

Text& fitted_text(Figure& f, float x, float y, const std::string& text, float size, float room, Color c, Anchor a,
                  bool bold, std::string role) {
  const bool fits = text_width(text, size, bold) <= room;
  Text& t = f.text(x, y, fits ? text : fit_text(text, size, room, bold), size, c, a, bold, std::move(role));
  t.room = room;
  t.cut = !fits;
  return t;
}

Rect text_box(const Text& t) {
  const float w = text_width(t.text, t.size, t.bold);
  float x = t.x;
  if (t.anchor == Anchor::Middle) x -= w / 2;
  if (t.anchor == Anchor::End) x -= w;
  return {x, t.y - t.size * 0.6f, w, t.size * 1.2f};
}

std::vector<std::pair<size_t, size_t>> overlapping_texts(const Figure& f) {
  std::vector<std::pair<size_t, Rect>> boxes;
  for (size_t i = 0; i < f.items.size(); ++i)
    if (const auto* t = std::get_if<Text>(&f.items[i])) boxes.emplace_back(i, text_box(*t));
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t a = 0; a < boxes.size(); ++a)
    for (size_t b = a + 1; b < boxes.size(); ++b)
      if (boxes[a].second.overlaps(boxes[b].second)) out.emplace_back(boxes[a].first, boxes[b].first);
  return out;
}

std::vector<size_t> texts_outside(const Figure& f) {
  std::vector<size_t> out;
  const Rect page{0, 0, f.width, f.height};
  for (size_t i = 0; i < f.items.size(); ++i)
    if (const auto* t = std::get_if<Text>(&f.items[i]))
      if (!page.contains(text_box(*t))) out.push_back(i);
  return out;
}

std::vector<size_t> texts_cut(const Figure& f) {
  static const std::string ellipsis = "…";
  std::vector<size_t> out;
  const Rect page{0, 0, f.width, f.height};
  for (size_t i = 0; i < f.items.size(); ++i) {
    const auto* t = std::get_if<Text>(&f.items[i]);
    if (!t) continue;
    const bool ends_cut = t->text.size() >= ellipsis.size() &&
                          t->text.compare(t->text.size() - ellipsis.size(), ellipsis.size(), ellipsis) == 0;
    const bool over_room = t->room > 0 && text_width(t->text, t->size, t->bold) > t->room + 0.01f;
    if (t->cut || ends_cut || over_room || !page.contains(text_box(*t))) out.push_back(i);
  }
  return out;
}

}  // namespace attnsim::figure
