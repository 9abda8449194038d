// The whole-model overview as a figure. See overview_figure.h.
#include "views/overview_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "figure/slide.h"
#include "figure/text_metrics.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

namespace {

constexpr float kSize = fig::kLabelMin, kGap = 8;
// Okabe-Ito: attention blue, the MLP bluish green (apart with deuteranopia).
const fig::Color kAttn = fig::rgb(0x0072B2), kMlp = fig::rgb(0x009E73);

// Text centred in `r` when it fits there, else nothing (the layout never overlaps labels).
void label_in(fig::Figure& f, const fig::Rect& r, const std::string& s, fig::Color c, bool bold = false) {
  if (fig::text_width(s, kSize, bold) + 6 > r.w || kSize * 1.2f > r.h) return;
  f.text(r.x + r.w / 2, r.y + r.h / 2, s, kSize, c, fig::Anchor::Middle, bold, "label");
}

// Every k-th of n labels fits `room` units each when each needs `need`: k >= 1.
int64_t label_stride(float room, float need) { return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(need / std::max(room, 1.0f)))); }

}  // namespace

OverviewLayout add_overview(fig::Figure& f, const fig::Theme& th, const fig::Rect& area, const OverviewInput& in,
                            Lang lang) {
  OverviewLayout out;
  const WholeRun& run = *in.run;
  const int64_t L = run.layers(), T = static_cast<int64_t>(in.tokens.size());
  const int64_t shown = in.reveal < 0 ? L + 1 : std::min(in.reveal, L + 1);  // the last stage drawn
  auto reached = [&](int64_t stage) { return stage <= shown; };
  // Columns: the token labels, then embed, the L blocks, logits, probs.
  float label_w = fig::text_width(tr_in(lang, "tokens"), kSize);
  for (const std::string& t : in.tokens) label_w = std::max(label_w, fig::text_width(t, kSize));
  label_w = std::min(label_w + 16, area.w * 0.15f);
  const float col_w = (area.w - label_w) / static_cast<float>(L + 3);
  auto col = [&](int64_t i) { return area.x + label_w + col_w * static_cast<float>(i); };

  // The stage names over the band.
  const float name_y = area.y + kSize * 0.6f;
  const float band_y = area.y + kSize * 1.4f, band_h = std::min(area.h * 0.3f, 200.0f);
  f.text(area.x, name_y, fig::fit_text(tr_in(lang, "tokens"), kSize, label_w - 8), kSize, th.text, fig::Anchor::Start,
         true, "label");
  auto name = [&](int64_t i, const std::string& s) {
    f.text(col(i) + col_w / 2, name_y, fig::fit_text(s, kSize, col_w - 4), kSize, th.text, fig::Anchor::Middle, true, "label");
  };
  name(0, "embed");
  const int64_t every = label_stride(col_w, fig::text_width("L" + std::to_string(L - 1), kSize) + 8);
  for (int64_t l = 0; l < L; l += every) name(1 + l, "L" + std::to_string(l));
  name(L + 1, "logits");
  name(L + 2, "probs");

  // The residual stream: one line through every stage, the blocks drawn on it.
  const float stream_y = band_y + band_h / 2;
  f.line(area.x + label_w - 8, stream_y, col(L + 2) + 4, stream_y, th.muted, 6, true);
  auto stage_box = [&](int64_t i, fig::Color tint) {
    const fig::Rect r{col(i) + kGap / 2, band_y, col_w - kGap, band_h};
    f.box(r, fig::mix(th.background, tint, 0.25f), th.frame, 2);
    return r;
  };
  out.embed = stage_box(0, th.muted);
  label_in(f, out.embed, tr_in(lang, "embedding"), th.text);
  for (int64_t l = 0; l < L; ++l) {
    const fig::Rect r{col(1 + l) + kGap / 2, band_y, col_w - kGap, band_h};
    f.box(r, th.background, th.frame, 2);
    out.blocks.push_back(r);
    if (!reached(1 + l)) continue;
    const fig::Rect attn{r.x + 4, r.y + 4, r.w - 8, (in.mlp ? r.h / 2 : r.h) - 8};
    f.box(attn, fig::mix(th.background, kAttn, 0.35f));
    label_in(f, attn, tr_in(lang, "attention"), th.text);
    if (in.mlp) {
      const fig::Rect mlp{r.x + 4, r.y + r.h / 2 + 4, r.w - 8, r.h / 2 - 8};
      f.box(mlp, fig::mix(th.background, kMlp, 0.35f));
      label_in(f, mlp, "MLP", th.text);
    }
  }
  const bool end = reached(L + 1);
  out.logits = stage_box(L + 1, end ? th.accent : th.background);
  const fig::Rect probs = stage_box(L + 2, end ? th.accent : th.background);
  if (end) {
    label_in(f, out.logits, tr_in(lang, "unembedding"), th.text);
    label_in(f, probs, "softmax", th.text);
  }

  // The stream's norm: positions down, stages across, under the columns they belong to.
  const float hm_y = band_y + band_h + kSize * 1.6f;
  const float hm_h = std::max(1.0f, area.bottom() - hm_y - kSize * 1.6f);
  f.text(col(0), band_y + band_h + kSize * 0.8f,
         fig::fit_text(tr_in(lang, "‖x‖ of the residual stream after each stage, per position"), kSize, col(L + 1) - col(0)),
         kSize, th.muted, fig::Anchor::Start, false, "label");
  fig::Heatmap hm;
  const int64_t cols = std::min(shown + 1, L + 1);  // embed, then each block reached
  hm.rect = {col(0) + kGap / 2, hm_y, col(cols) - col(0) - kGap, hm_h};
  hm.rows = T;
  hm.cols = cols;
  const auto ends = fig::colormap_ends(fig::ColorMapId::Viridis, 0, static_cast<float>(run.max_stream_norm()));
  hm.lo = ends[0];
  hm.hi = ends[1];
  hm.gap = th.gap;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < cols; ++s) hm.values.push_back(static_cast<float>(run.stream_norm[static_cast<size_t>(s)][static_cast<size_t>(t)]));
  out.norm_item = f.items.size();
  f.heatmap(std::move(hm));
  const float row_h = hm_h / static_cast<float>(std::max<int64_t>(T, 1));
  const int64_t row_every = label_stride(row_h, kSize * 1.2f);
  for (int64_t t = 0; t < T; ++t)
    if (t % row_every == 0)
      f.text(area.x + label_w - 12, hm_y + row_h * (static_cast<float>(t) + 0.5f),
             fig::fit_text(in.tokens[static_cast<size_t>(t)], kSize, label_w - 16), kSize, th.text, fig::Anchor::End,
             false, "label");

  // The answer at the last position, beside its row, once the stream reaches the logits.
  if (!end) return out;
  const model::LensRow& last = run.lens.rows.back();
  const float answer_y = hm_y + row_h * (static_cast<float>(T) - 0.5f);
  f.text(col(L + 1) + col_w / 2, answer_y, fig::fit_text("→ " + in.answer, kSize, col_w - 8), kSize, th.text,
         fig::Anchor::Middle, true, "label");
  char p[32];
  std::snprintf(p, sizeof p, "%.1f %%", 100 * last.top_prob);
  f.text(col(L + 2) + col_w / 2, answer_y, fig::fit_text(p, kSize, col_w - 8), kSize, th.text, fig::Anchor::Middle, false,
         "label");
  return out;
}

fig::Figure overview_view_figure(const OverviewInput& in, Lang lang, const std::string& theme, float width, float height,
                                 OverviewLayout* layout) {
  const fig::Theme& th = fig::theme_by_name(theme);
  fig::Figure f;
  f.width = width;
  f.height = height;
  f.background = th.background;
  f.theme = th.name;
  f.title = tr_in(lang, "the whole model");
  const OverviewLayout l = add_overview(f, th, {4, 4, width - 8, height - 8}, in, lang);
  if (layout) *layout = l;
  return f;
}

fig::Figure overview_slide(const OverviewInput& in, const std::string& title, Lang lang, const std::string& theme) {
  const fig::Theme& th = fig::theme_by_name(theme);
  fig::SlideSpec spec;
  spec.title = title;
  spec.caption = tr_in(lang, "Every block reads the residual stream and adds what it writes back into it; the last "
                             "stream becomes the logits.");
  spec.footer = "attnsim · whole pass";
  spec.legend.map = fig::ColorMapId::Viridis;
  const auto ends = fig::colormap_ends(fig::ColorMapId::Viridis, 0, static_cast<float>(in.run->max_stream_norm()));
  spec.legend.lo = ends[0];
  spec.legend.hi = ends[1];
  spec.legend.what = "‖x‖";
  fig::Slide s = fig::make_slide(spec, th);
  add_overview(s.figure, th, s.visual, in, lang);
  s.figure.title = spec.title;
  return s.figure;
}

}  // namespace attnsim::app
