// The flash panel's figure. See flash_view.h.
#include "views/flash_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "views/flash_slides.h"
#include "engine/bugs.h"
#include "engine/error.h"
#include "engine/mask.h"
#include "figure/palette.h"
#include "figure/slide.h"
#include "figure/tensor_figure.h"
#include "figure/text_metrics.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

namespace {

// The latest Tile / Final event of query block `qb` at or before `upto` (a skip changes nothing).
const FlashEvent* latest_for_block(const std::vector<FlashEvent>& ev, size_t upto, int64_t qb) {
  for (size_t i = upto + 1; i-- > 0;)
    if (ev[i].q_block == qb && ev[i].kind != FlashEventKind::Skipped) return &ev[i];
  return nullptr;
}

}  // namespace

std::string flash_bug_caption(const MhaConfig& c, lessons::Lang lang) {
  if (c.bug == Bug::None || c.bug == Bug::NoScale) return "";
  const std::string bug = bug_name(c.bug);
  if (is_mask_bug(c.bug)) {
    const std::string mask = format_mask_spec(c.mask);
    return lang == lessons::Lang::Ko
               ? "타일 순회는 의도한 마스크(" + mask + ")를 쓴다: 이 시나리오의 " + bug + " 버그는 재현하지 않는다."
               : "The tiled walk uses the intended mask (" + mask + "), not this scenario's " + bug + " bug.";
  }
  return lang == lessons::Lang::Ko ? "타일 순회는 올바른 계산을 한다: " + bug + " 버그는 재현하지 않는다."
                                   : "The tiled walk runs the correct math: it does not reproduce the " + bug + " bug.";
}

FlashView flash_view(const FlashViewSpec& s) {
  if (!s.run || !s.core) throw Error("the flash view needs a run and its tile trace");
  const RunData& d = *s.run;
  const std::vector<FlashEvent>& ev = s.core->events;
  if (s.event >= ev.size())
    throw Error("flash event " + std::to_string(s.event) + " is outside the trace's " + std::to_string(ev.size()));
  const fig::Theme& th = fig::theme_by_name(s.theme);
  const MhaConfig& c = d.config;
  const int64_t tq = c.tq, dk = c.head_dim();

  FlashView v;
  v.figure.width = s.width;
  v.figure.height = s.height;
  v.figure.background = th.background;
  v.figure.theme = th.name;
  v.figure.title = "FlashAttention";
  fig::Figure& f = v.figure;

  // Outputs on the right (a sixth of the width), the slide's tile figure on the rest; the
  // bug caption, when there is one, under the tiles.
  const float pad = 16, gap = 40;
  const float out_w = std::clamp(s.width * 0.16f, 260.0f, 480.0f);
  const std::string caption = flash_bug_caption(c, s.lang);
  const std::vector<std::string> lines =
      caption.empty() ? std::vector<std::string>{} : fig::wrap_text(caption, fig::kLabelMin, s.width - out_w - gap - 2 * pad, 2);
  const float caption_h = static_cast<float>(lines.size()) * 38.0f;
  v.tiles_area = {pad, pad, s.width - out_w - gap - 2 * pad, s.height - 2 * pad - caption_h};
  v.tiles = fig::add_flash_tiles(f, th, v.tiles_area, flash_tiles_input(d, *s.core, s.batch, s.block_q, s.block_k, s.event),
                                 flash_words(s.lang));
  float y = v.tiles_area.bottom() + 19;
  for (const std::string& line : lines) {
    if (v.caption == SIZE_MAX) v.caption = f.items.size();
    f.text(pad, y, line, fig::kLabelMin, th.accent, fig::Anchor::Start, false, "caption");
    y += 38;
  }

  // O / l of every query row reached so far (the engine's flash_partial_output of its block's
  // latest event), against the exact output: the standard path's ctx_heads, or for a bug the
  // tiled path does not reproduce, the correct run beside it.
  v.now.assign(static_cast<size_t>(tq * dk), 0.0f);
  v.reached.assign(static_cast<size_t>(tq), false);
  for (int64_t qb = 0; qb * s.block_q < tq; ++qb) {
    const FlashEvent* x = latest_for_block(ev, s.event, qb);
    if (!x) continue;
    const Tensor o = flash_partial_output(*x);
    if (!o.defined()) continue;
    for (int64_t r = 0; r < x->rows && x->q0 + r < tq; ++r) {
      v.reached[static_cast<size_t>(x->q0 + r)] = true;
      for (int64_t j = 0; j < dk; ++j) v.now[static_cast<size_t>((x->q0 + r) * dk + j)] = o.at({r, j});
    }
  }
  const bool use_reference = d.has_reference && c.bug != Bug::None && c.bug != Bug::NoScale;
  const Step* exact = (use_reference ? d.reference.trace : d.run.trace).find("ctx_heads");
  v.exact.assign(static_cast<size_t>(tq * dk), 0.0f);
  float range = 1e-6f;
  if (exact && exact->out.defined())
    for (int64_t r = 0; r < tq; ++r)
      for (int64_t j = 0; j < dk; ++j) {
        const float e = exact->out.at({s.batch, s.head, r, j});
        v.exact[static_cast<size_t>(r * dk + j)] = e;
        if (std::isfinite(e)) range = std::max(range, std::fabs(e));
        const float o = v.now[static_cast<size_t>(r * dk + j)];
        if (v.reached[static_cast<size_t>(r)] && std::isfinite(o) && std::isfinite(e))
          v.worst = std::max(v.worst, std::fabs(static_cast<double>(o) - e));
      }
  fig::Block now{in_lang(s.lang, "지금까지 O/l", "O/l so far"), tq, dk, v.now, fig::ColorMapId::Diverging, -range, range};
  fig::Block ex{in_lang(s.lang, "정확한 값", "exact"), tq, dk, v.exact, fig::ColorMapId::Diverging, -range, range};
  fig::AxisLabels labels;
  if (s.batch < static_cast<int64_t>(d.q_tokens.size())) labels.rows = d.q_tokens[static_cast<size_t>(s.batch)];
  labels.row_noun = in_lang(s.lang, "질의 토큰", "query tokens");
  const fig::Rect out_area{s.width - pad - out_w, pad, out_w, s.height - 2 * pad - 48};
  const fig::BlocksLayout bl = fig::add_blocks(f, th, out_area, {now, ex}, labels);
  v.outputs = bl.cells;
  // Rows no tile has written yet: blank, as the grid's tiles not reached.
  if (!v.outputs.empty()) {
    const fig::Rect& g = v.outputs.front();
    const float rh = g.h / static_cast<float>(std::max<int64_t>(tq, 1));
    const fig::Color pending{th.background.r + (th.muted.r - th.background.r) * 0.18f,
                             th.background.g + (th.muted.g - th.background.g) * 0.18f,
                             th.background.b + (th.muted.b - th.background.b) * 0.18f, 1};
    for (int64_t r = 0; r < tq; ++r)
      if (!v.reached[static_cast<size_t>(r)]) f.box({g.x, g.y + static_cast<float>(r) * rh, g.w, rh}, pending);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "max |diff| %.2g", v.worst);
  f.text(out_area.x, s.height - pad - 24, fig::fit_text(buf, fig::kLabelMin, out_w), fig::kLabelMin, th.text,
         fig::Anchor::Start, false, "value");
  return v;
}

}  // namespace attnsim::app
