// The Lens tab as a slide. See lens_figure.h.
#include "views/lens_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "figure/palette.h"
#include "figure/slide.h"
#include "figure/text_metrics.h"
#include "views/step_names.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

namespace {

constexpr float kSize = fig::kLabelMin;
const fig::Color kBar = fig::rgb(0x0072B2);  // Okabe-Ito blue, as the sampling chart's kept set

std::string fmt(const char* f, double v) {
  char s[32];
  std::snprintf(s, sizeof s, f, v);
  return s;
}

void add_lens(fig::Figure& f, const fig::Theme& th, const fig::Rect& area, const WholeRun& run, const TokenLabel& label,
              Lang lang) {
  const model::LogitLens& lens = run.lens;
  f.text(area.x, area.y + kSize * 0.6f,
         fig::fit_text(trf_in(lang, "the logit lens: the final answer '%s' read after each stage", label(lens.target).c_str()),
                       kSize, area.w),
         kSize, th.text, fig::Anchor::Start, true, "label");
  const float top = area.y + kSize * 2, row_h = std::min(kSize * 2.4f, (area.h - kSize * 2) / std::max<size_t>(lens.rows.size(), 1));
  // Each stage by its display name ("block 2", step_names.h); the column as wide as the widest.
  float stage_w = 0;
  for (const model::LensRow& r : lens.rows) stage_w = std::max(stage_w, fig::text_width(step_display_name(r.stage, lang), kSize));
  stage_w = std::min(stage_w + 12, area.w * 0.3f);
  const float token_w = area.w * 0.28f;
  const float bar_x = area.x + stage_w + token_w, bar_w = area.w - stage_w - token_w - fig::text_width("100.0 %", kSize) - 16;
  for (size_t i = 0; i < lens.rows.size(); ++i) {
    const model::LensRow& r = lens.rows[i];
    const float y = top + row_h * static_cast<float>(i), mid = y + row_h / 2;
    const bool answer = r.top == lens.target;
    f.text(area.x, mid, fig::fit_text(step_display_name(r.stage, lang), kSize, stage_w - 12), kSize, th.text,
           fig::Anchor::Start, false, "label");
    f.text(area.x + stage_w, mid, fig::fit_text(label(r.top), kSize, token_w - 8), kSize, answer ? th.accent : th.muted,
           fig::Anchor::Start, answer, "label");
    const fig::Rect bar{bar_x, y + row_h * 0.2f, std::max(2.0f, bar_w * static_cast<float>(r.target_prob)), row_h * 0.6f};
    f.box(bar, answer ? th.accent : kBar);
    f.text(bar.right() + 8, mid, fmt("%.1f %%", 100 * r.target_prob), kSize, th.text, fig::Anchor::Start, false, "label");
  }
}

void add_dla(fig::Figure& f, const fig::Theme& th, const fig::Rect& area, const WholeRun& run, int64_t heads,
             const TokenLabel& label, Lang lang) {
  const model::LogitAttribution& dla = run.dla;
  const int64_t L = run.layers();
  f.text(area.x, area.y + kSize * 0.6f,
         fig::fit_text(trf_in(lang, "direct logit attribution of '%s': each head's part", label(dla.token).c_str()), kSize,
                       area.w),
         kSize, th.text, fig::Anchor::Start, true, "label");
  double m = 1e-9;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t h = 0; h < heads; ++h) m = std::max(m, std::abs(head_part(dla, l, h)));
  const std::vector<model::LogitPart> direct = direct_parts(dla);
  const float label_w = fig::text_width("L00", kSize) + 12, head_row = kSize * 1.6f;
  const float list_h = kSize * 1.5f * static_cast<float>(std::min<size_t>(direct.size(), 6) + 1);
  const float grid_h = area.h - kSize * 2 - head_row - list_h;
  const float cell = std::max(4.0f, std::min((area.w - label_w) / static_cast<float>(heads), grid_h / static_cast<float>(L)));
  const float gx = area.x + label_w, gy = area.y + kSize * 2 + head_row;
  fig::Heatmap hm;
  hm.rect = {gx, gy, cell * static_cast<float>(heads), cell * static_cast<float>(L)};
  hm.rows = L;
  hm.cols = heads;
  hm.map = fig::ColorMapId::Diverging;
  hm.lo = static_cast<float>(-m);
  hm.hi = static_cast<float>(m);
  hm.gap = th.gap;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t h = 0; h < heads; ++h) hm.values.push_back(static_cast<float>(head_part(dla, l, h)));
  f.heatmap(std::move(hm));
  const bool values = fig::text_width("-0.00", kSize) + 6 <= cell;
  for (int64_t h = 0; h < heads; ++h)
    f.text(gx + cell * (static_cast<float>(h) + 0.5f), gy - head_row / 2, "H" + std::to_string(h), kSize, th.muted,
           fig::Anchor::Middle, false, "label");
  for (int64_t l = 0; l < L; ++l) {
    const float cy = gy + cell * (static_cast<float>(l) + 0.5f);
    f.text(area.x, cy, "L" + std::to_string(l), kSize, th.muted, fig::Anchor::Start, false, "label");
    for (int64_t h = 0; values && h < heads; ++h)
      f.text(gx + cell * (static_cast<float>(h) + 0.5f), cy, fmt("%.2f", head_part(dla, l, h)), kSize,
             std::abs(head_part(dla, l, h)) > 0.6 * m ? fig::rgb(0xffffff) : fig::rgb(0x202028),  // dark ends: white
             fig::Anchor::Middle, false, "value");
  }
  // the direct paths, largest first, and the check that the parts add up to the logit
  std::vector<model::LogitPart> shown = direct;
  std::stable_sort(shown.begin(), shown.end(), [](const auto& a, const auto& b) { return std::abs(a.value) > std::abs(b.value); });
  shown.resize(std::min<size_t>(shown.size(), 6));
  float y = gy + cell * static_cast<float>(L) + kSize * 1.2f;
  for (const model::LogitPart& p : shown) {
    f.text(area.x, y, fig::fit_text(step_display_name(p.name, lang) + "  " + fmt("%+.3f", p.value), kSize, area.w), kSize,
           th.text, fig::Anchor::Start, false, "label");
    y += kSize * 1.5f;
  }
  f.text(area.x, y, fig::fit_text(trf_in(lang, "logit %.3f = the parts' sum %.3f", dla.logit, dla.sum()), kSize, area.w),
         kSize, th.text, fig::Anchor::Start, true, "label");
}

}  // namespace

std::vector<TokenChoice> top_token_choices(const WholeRun& run, int k) {
  std::vector<TokenChoice> out;
  if (!run.last_logits.defined()) return out;
  const std::vector<float> logits = run.last_logits.to_vector();  // (1,1,V)
  if (logits.empty()) return out;
  const double mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float x : logits) sum += std::exp(static_cast<double>(x) - mx);
  std::vector<int32_t> ids(logits.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
  const size_t n = std::min(ids.size(), static_cast<size_t>(std::max(k, 0)));
  // Largest logit first; the lower id first on a tie (as the model's top token is chosen).
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(), [&](int32_t a, int32_t b) {
    return logits[static_cast<size_t>(a)] != logits[static_cast<size_t>(b)] ? logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)]
                                                                            : a < b;
  });
  for (size_t i = 0; i < n; ++i)
    out.push_back({ids[i], std::exp(static_cast<double>(logits[static_cast<size_t>(ids[i])]) - mx) / sum});
  return out;
}

fig::Figure lens_slide(const WholeRun& run, int64_t heads, const TokenLabel& label, Lang lang, const std::string& theme,
                       const std::string& title, const std::string& caption) {
  const fig::Theme& th = fig::theme_by_name(theme);
  fig::SlideSpec spec;
  spec.title = !title.empty() ? title : tr_in(lang, "what each layer and head adds to the answer");
  spec.caption = !caption.empty() ? caption
                                  : tr_in(lang, "Left: the answer read early, after each stage. Right: its logit split by "
                                                "the head that wrote each part; orange adds, purple takes away.");
  spec.footer = "attnsim · logit lens";
  spec.legend.map = fig::ColorMapId::Diverging;
  double m = 1e-9;
  for (int64_t l = 0; l < run.layers(); ++l)
    for (int64_t h = 0; h < heads; ++h) m = std::max(m, std::abs(head_part(run.dla, l, h)));
  spec.legend.lo = static_cast<float>(-m);
  spec.legend.hi = static_cast<float>(m);
  spec.legend.what = tr_in(lang, "logit part");
  fig::Slide s = fig::make_slide(spec, th);
  const fig::Rect v = s.visual;
  add_lens(s.figure, th, {v.x, v.y, v.w * 0.48f, v.h}, run, label, lang);
  add_dla(s.figure, th, {v.x + v.w * 0.52f, v.y, v.w * 0.48f, v.h}, run, heads, label, lang);
  s.figure.title = spec.title;
  s.figure.kind = "lens";
  return s.figure;
}

}  // namespace attnsim::app
