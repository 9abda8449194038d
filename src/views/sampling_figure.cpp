// The sampling chart as a figure. See sampling_figure.h.
#include "views/sampling_figure.h"

#include <algorithm>
#include <cstdio>

#include "figure/slide.h"
#include "figure/text_metrics.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

namespace {

// Okabe-Ito: the kept set blue, the chosen token's frame vermillion (apart with deuteranopia).
const fig::Color kKept = fig::rgb(0x0072B2), kChosen = fig::rgb(0xD55E00);
constexpr float kSize = fig::kLabelMin, kRowMin = kSize * 1.3f, kRowMax = kSize * 2.2f;

std::string percent(double p) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f %%", 100 * p);
  return s;
}

std::string kept_line(const SamplingChart& c, Lang lang) {
  if (c.options.temperature <= 0) return tr_in(lang, "greedy: the most likely token, every time");
  return trf_in(lang, "kept: %lld of %lld tokens, %.1f%% of the probability", static_cast<long long>(c.kept_count),
                static_cast<long long>(c.vocab), 100 * c.kept_mass);
}

// The bars that fit `rows` rows: the first ones, and the chosen and the marked one always
// (each taking the place of the last bar that is neither).
std::vector<size_t> fitting(const SamplingChart& c, size_t rows) {
  std::vector<size_t> out;
  for (size_t i = 0; i < c.bars.size() && out.size() < rows; ++i) out.push_back(i);
  size_t last = out.size();
  for (size_t i = 0; i < c.bars.size(); ++i) {
    if (!(c.bars[i].chosen || c.bars[i].marked) || std::find(out.begin(), out.end(), i) != out.end()) continue;
    while (last > 0 && (c.bars[out[last - 1]].chosen || c.bars[out[last - 1]].marked)) --last;
    if (last == 0) break;
    out[--last] = i;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string sampling_settings(const model::SamplingOptions& o, Lang lang) {
  if (o.temperature <= 0) return tr_in(lang, "greedy (temperature 0)");
  std::string s = trf_in(lang, "temperature %.2f", o.temperature) + " · ";
  s += o.top_k > 0 ? trf_in(lang, "top-k %lld", static_cast<long long>(o.top_k)) : tr_in(lang, "top-k off");
  s += " · ";
  s += o.top_p < 1 ? trf_in(lang, "top-p %.2f", o.top_p) : tr_in(lang, "top-p off");
  return s + " · " + trf_in(lang, "seed %llu", static_cast<unsigned long long>(o.seed));
}

SamplingLayout add_sampling_chart(fig::Figure& f, const fig::Theme& th, const fig::Rect& area, const SamplingChart& c,
                                  const TokenLabel& label, Lang lang) {
  SamplingLayout out;
  const float line = kSize * 1.5f;
  f.text(area.x, area.y + line / 2, fig::fit_text(sampling_settings(c.options, lang), kSize, area.w), kSize, th.text,
         fig::Anchor::Start, true, "label");
  f.text(area.x, area.bottom() - line / 2, fig::fit_text(kept_line(c, lang), kSize, area.w), kSize, th.muted,
         fig::Anchor::Start, false, "label");
  const fig::Rect rows{area.x, area.y + line, area.w, area.h - 2 * line};
  const std::vector<size_t> shown = fitting(c, static_cast<size_t>(std::max(1.0f, rows.h / kRowMin)));
  if (shown.empty()) return out;
  const float row_h = std::min(kRowMax, rows.h / static_cast<float>(shown.size()));

  // Columns: labels as wide as the widest (at most a quarter), values and "← chosen" after the bars.
  float label_w = 0;
  for (size_t i : shown) label_w = std::max(label_w, fig::text_width(label(c.bars[i].token), kSize));
  label_w = std::min(label_w + 16, area.w * 0.25f);
  const std::string chosen_text = tr_in(lang, "← chosen");
  const float value_w = fig::text_width("100.0 %", kSize) + fig::text_width(chosen_text, kSize) + 32;
  const float bar_x = area.x + label_w, bar_w = std::max(1.0f, area.w - label_w - value_w);
  float top = 0;
  for (const SamplingBar& b : c.bars) top = std::max(top, b.prob);

  out.bars.resize(c.bars.size());
  for (size_t r = 0; r < shown.size(); ++r) {
    const size_t i = shown[r];
    const SamplingBar& b = c.bars[i];
    const float y = rows.y + row_h * static_cast<float>(r), mid = y + row_h / 2;
    const fig::Rect bar{bar_x, y + row_h * 0.15f, std::max(2.0f, bar_w * (top > 0 ? b.prob / top : 0)), row_h * 0.7f};
    f.text(bar_x - 12, mid, fig::fit_text(label(b.token), kSize, label_w - 16), kSize, b.kept ? th.text : th.muted,
           fig::Anchor::End, b.chosen, "label");
    fig::Box& box = f.box(bar, b.kept ? kKept : fig::mix(th.background, th.muted, 0.45f));
    if (b.chosen) {
      box.stroke = kChosen;
      box.stroke_width = 4;
    }
    const float vx = bar.right() + 12;
    f.text(vx, mid, percent(b.prob), kSize, b.kept ? th.text : th.muted, fig::Anchor::Start, false, "label");
    if (b.chosen) {
      f.text(vx + fig::text_width("100.0 %", kSize) + 16, mid, chosen_text, kSize, kChosen, fig::Anchor::Start, true,
             "label");
      out.chosen = i;
    }
    if (b.marked)  // what a lesson step's text names (lessons/step_marks.h): the whole row framed
      f.box({area.x, y + 2, area.w, row_h - 4}, {0, 0, 0, 0}, th.highlight, 4);
    out.bars[i] = bar;
  }
  return out;
}

fig::Figure sampling_view_figure(const SamplingChart& c, const TokenLabel& label, Lang lang, const std::string& theme,
                                 float width) {
  const fig::Theme& th = fig::theme_by_name(theme);
  fig::Figure f;
  const float rows = static_cast<float>(std::max<size_t>(c.bars.size(), 1));
  f.width = width;
  f.height = kSize * 3 + rows * kSize * 1.6f + 8;
  f.background = th.background;
  f.theme = th.name;
  f.title = tr_in(lang, "next-token probabilities");
  add_sampling_chart(f, th, {4, 4, width - 8, f.height - 8}, c, label, lang);
  return f;
}

fig::Figure sampling_slide(const SamplingChart& c, const TokenLabel& label, const std::string& title, Lang lang,
                           const std::string& theme, const std::string& caption) {
  const fig::Theme& th = fig::theme_by_name(theme);
  fig::SlideSpec spec;
  spec.title = title;
  spec.caption = !caption.empty() ? caption : tr_in(lang, "Only the kept tokens can be drawn; the frame marks the one chosen.");
  spec.footer = "attnsim · " + sampling_settings(c.options, lang);
  spec.has_legend = false;
  fig::Slide s = fig::make_slide(spec, th);
  add_sampling_chart(s.figure, th, s.visual, c, label, lang);
  s.figure.title = spec.title;
  s.figure.kind = "sampling";
  return s.figure;
}

}  // namespace attnsim::app
