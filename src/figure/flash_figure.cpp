// FlashAttention's tile grid as a figure. See flash_figure.h.
//
// Index
//   [SECTION] numbers and events
//   [SECTION] the tile grid
//   [SECTION] the m / l table and the memory lines
#include "figure/flash_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/cost.h"
#include "engine/error.h"
#include "figure/tensor_figure.h"
#include "figure/text_metrics.h"

namespace attnsim::figure {

// [SECTION] numbers and events ----------------------------------------------------------------

std::string flash_number(float v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char b[32];
  const float a = std::fabs(v);
  if (a != 0 && (a < 1e-3f || a >= 1e4f)) std::snprintf(b, sizeof b, "%.3g", static_cast<double>(v));
  else std::snprintf(b, sizeof b, "%.3f", static_cast<double>(v));
  return b;
}

float flash_score_range(const std::vector<FlashEvent>& events) {
  float m = 0;
  for (const FlashEvent& e : events)
    if (e.kind == FlashEventKind::Tile && e.scores.defined())
      for (int64_t r = 0; r < e.rows; ++r)
        for (int64_t c = 0; c < e.cols; ++c) {
          const float v = e.scores.at({r, c});
          if (std::isfinite(v)) m = std::max(m, std::fabs(v));
        }
  return std::max(m, 1e-6f);
}

size_t flash_event_of_tile(const std::vector<FlashEvent>& events, int64_t q_block, int64_t k_block) {
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].kind != FlashEventKind::Final && events[i].q_block == q_block && events[i].k_block == k_block)
      return i;
  return events.size();
}

namespace {

void check(const FlashTiles& in) {
  if (!in.events || in.events->empty()) throw Error("the flash figure needs a recorded tile trace");
  if (in.event >= in.events->size())
    throw Error("flash event " + std::to_string(in.event) + " is outside 0.." + std::to_string(in.events->size() - 1));
  if (in.tq < 1 || in.tk < 1 || in.block_q < 1 || in.block_k < 1) throw Error("the flash figure needs Tq, Tk, Br, Bc >= 1");
}

// The latest Tile / Final event of query block `qb` at or before `upto` (what a Skipped event
// leaves standing), or nullptr before the block's first visit.
const FlashEvent* latest_for_block(const std::vector<FlashEvent>& ev, size_t upto, int64_t qb) {
  for (size_t i = upto + 1; i-- > 0;)
    if (ev[i].q_block == qb && ev[i].kind != FlashEventKind::Skipped) return &ev[i];
  return nullptr;
}

enum class TileState : uint8_t { Pending, Seen, Skipped };

}  // namespace

Legend flash_legend(const FlashTiles& in, const std::string& what) {
  check(in);
  Legend lg;
  lg.map = ColorMapId::Diverging;
  const float r = flash_score_range(*in.events);
  lg.lo = -r;
  lg.hi = r;
  lg.what = what;
  for (size_t i = 0; i <= in.event; ++i) {
    const FlashEvent& e = (*in.events)[i];
    if (e.kind != FlashEventKind::Tile || !e.scores.defined()) continue;
    for (int64_t k = 0; k < e.scores.numel() && !lg.neginf; ++k)
      lg.neginf = std::isinf(e.scores.at({k / e.cols, k % e.cols}));
  }
  return lg;
}

// [SECTION] the tile grid ------------------------------------------------------------------

FlashTilesLayout add_flash_tiles(Figure& f, const Theme& th, const Rect& area, const FlashTiles& in,
                                 const FlashWords& words) {
  check(in);
  const std::vector<FlashEvent>& ev = *in.events;
  const FlashEvent& e = ev[in.event];
  FlashTilesLayout out;
  const float gap = 48;
  // Half the width for the m / l table (880 at most); a narrower area (the app's panel) gives
  // it up to 60% so "before → after" still fits: the square grid needs less than the table.
  const float right_w = std::min(880.0f, std::max(area.w * 0.5f, std::min(800.0f, area.w * 0.6f)));
  const Rect left{area.x, area.y, area.w - right_w - gap, area.h - 48};
  const Rect right{left.right() + gap, area.y, right_w, area.h};

  // The scores of the tiles visited so far; the rest is covered below.
  Block scores{"", in.tq, in.tk, std::vector<float>(static_cast<size_t>(in.tq * in.tk), 0.0f), ColorMapId::Diverging};
  const float range = flash_score_range(ev);
  scores.lo = -range;
  scores.hi = range;
  const int64_t qbs = (in.tq + in.block_q - 1) / in.block_q, kbs = (in.tk + in.block_k - 1) / in.block_k;
  std::vector<TileState> tiles(static_cast<size_t>(qbs * kbs), TileState::Pending);
  // A wholly hidden tile is known from the mask before the loop reaches it: crossed out from
  // the start (as the app's flash panel does).
  for (const FlashEvent& x : ev)
    if (x.kind == FlashEventKind::Skipped && x.q_block < qbs && x.k_block < kbs)
      tiles[static_cast<size_t>(x.q_block * kbs + x.k_block)] = TileState::Skipped;
  for (size_t i = 0; i <= in.event; ++i) {
    const FlashEvent& x = ev[i];
    if (x.kind != FlashEventKind::Tile || x.q_block >= qbs || x.k_block >= kbs) continue;
    tiles[static_cast<size_t>(x.q_block * kbs + x.k_block)] = TileState::Seen;
    if (!x.scores.defined()) continue;  // a GPU trace: positions only
    for (int64_t r = 0; r < x.rows && x.q0 + r < in.tq; ++r)
      for (int64_t c = 0; c < x.cols && x.k0 + c < in.tk; ++c)
        scores.values[static_cast<size_t>((x.q0 + r) * in.tk + x.k0 + c)] = x.scores.at({r, c});
  }
  AxisLabels labels;
  if (static_cast<int64_t>(in.q_tokens.size()) == in.tq) labels.rows = in.q_tokens;
  if (static_cast<int64_t>(in.k_tokens.size()) == in.tk) labels.cols = in.k_tokens;
  labels.row_noun = words.query_tokens;
  labels.col_noun = words.key_tokens;
  const BlocksLayout bl = add_blocks(f, th, left, {scores}, labels);
  out.grid = bl.cells.front();
  const float cw = out.grid.w / static_cast<float>(in.tk), ch = out.grid.h / static_cast<float>(in.tq);
  auto cells = [&](int64_t r0, int64_t c0, int64_t r1, int64_t c1) {
    r1 = std::min(r1, in.tq), c1 = std::min(c1, in.tk);
    return Rect{out.grid.x + static_cast<float>(c0) * cw, out.grid.y + static_cast<float>(r0) * ch,
                static_cast<float>(c1 - c0) * cw, static_cast<float>(r1 - r0) * ch};
  };
  const Color pending = mix(th.background, th.muted, 0.18f), skipped = mix(th.background, th.muted, 0.4f);
  for (int64_t qb = 0; qb < qbs; ++qb)
    for (int64_t kb = 0; kb < kbs; ++kb) {
      const Rect r = cells(qb * in.block_q, kb * in.block_k, (qb + 1) * in.block_q, (kb + 1) * in.block_k);
      out.tile_boxes.push_back(r);
      const TileState s = tiles[static_cast<size_t>(qb * kbs + kb)];
      if (s == TileState::Pending) f.box(r, pending);
      if (s == TileState::Skipped) {
        f.box(r, skipped);
        f.line(r.x, r.y, r.right(), r.bottom(), th.muted, 2);
        f.line(r.x, r.bottom(), r.right(), r.y, th.muted, 2);
        const float w = text_width(words.skip, kLabelMin);
        if (w + 16 < r.w && r.h > 40) {
          f.box({r.x + (r.w - w) / 2 - 6, r.y + r.h / 2 - 19, w + 12, 38}, skipped);
          f.text(r.x + r.w / 2, r.y + r.h / 2, words.skip, kLabelMin, th.text, Anchor::Middle, false, "label");
        }
      }
      f.box(r, {0, 0, 0, 0}, th.frame, 2);
    }
  // The event's tile (a Final event: its whole query block), outlined so it shows on any cell
  // colour: a wide band of background under the highlight.
  const Rect lit = e.kind == FlashEventKind::Final ? cells(e.q0, 0, e.q0 + e.rows, in.tk)
                                                   : cells(e.q0, e.k0, e.q0 + e.rows, e.k0 + e.cols);
  f.box(lit, {0, 0, 0, 0}, th.background, 11);
  f.box(lit, {0, 0, 0, 0}, th.highlight, 6);
  f.text(left.x + left.w / 2, area.bottom() - 20, fit_text(words.grid_caption, kLabelMin, left.w), kLabelMin,
         th.muted, Anchor::Middle, false, "note");

  // [SECTION] the m / l table and the memory lines ---------------------------------------------
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %zu / %zu", words.event.c_str(), in.event + 1, ev.size());
  const std::string counter = buf;
  const float counter_w = text_width(counter, kLabelMin);
  std::string heading = words.query_block + " " + std::to_string(e.q_block);
  if (e.kind != FlashEventKind::Final)
    heading += " · " + words.tile + " (" + std::to_string(e.q_block) + ", " + std::to_string(e.k_block) + ")";
  float y = right.y + 22;
  f.text(right.x, y, fit_text(heading, kBodySize, right.w - counter_w - 24, true), kBodySize, th.text, Anchor::Start,
         true, "label");
  f.text(right.right(), y, counter, kLabelMin, th.muted, Anchor::End, false, "label");
  y += 46;
  const std::string note = e.kind == FlashEventKind::Skipped ? words.skipped
                           : e.kind == FlashEventKind::Final ? words.final_division
                                                              : std::string();
  if (!note.empty())
    f.text(right.x, y, fit_text(note, kLabelMin, right.w), kLabelMin, e.kind == FlashEventKind::Final ? th.accent : th.muted,
           Anchor::Start, false, "note");
  y += 44;

  // Every query row when they all fit (the rows of other blocks as their last event left
  // them, muted), else the event's block only. The event's rows: a Tile event's before ->
  // after, a Final event's final m and l, a Skipped event's as the block's last visit left
  // them (a skip changes nothing).
  const float bottom_h = 150;  // two memory lines and the two traffic bars
  const float table_h = right.bottom() - bottom_h - y;
  const bool all_rows = static_cast<float>(in.tq + 1) * 36.0f <= table_h;
  const int64_t first = all_rows ? 0 : e.q0, rows = all_rows ? in.tq : e.rows;
  const float line_h = std::clamp(table_h / static_cast<float>(rows + 1), 36.0f, 48.0f);
  int64_t shown = std::min<int64_t>(rows, static_cast<int64_t>(table_h / line_h) - 1);
  if (shown < rows) shown = std::max<int64_t>(0, shown - 1);  // room for "… N more rows"
  float size = std::min(kBodySize, std::max(kLabelMin, line_h / 1.3f));
  auto widest = [&](const std::vector<std::string>& v) {
    float w = 0;
    for (const auto& t : v) w = std::max(w, text_width(t, size));
    return w;
  };
  struct RowText {
    std::string name, m, l, c;
    bool current = false, raised = false;
  };
  std::vector<RowText> table;
  for (int64_t q = first; q < first + shown; ++q) {
    RowText t;
    t.name = static_cast<int64_t>(in.q_tokens.size()) == in.tq ? std::to_string(q) + " " + in.q_tokens[static_cast<size_t>(q)]
                                                                : words.row + " " + std::to_string(q);
    t.current = q >= e.q0 && q < e.q0 + e.rows;
    const int64_t qb = q / in.block_q;
    const FlashEvent* src = t.current && e.kind != FlashEventKind::Skipped ? &e : latest_for_block(ev, in.event, qb);
    const int64_t r = src ? q - src->q0 : 0;
    t.m = "-inf";  // a block not visited yet: the loop's starting values
    t.l = flash_number(0.0f);
    if (src && src->kind == FlashEventKind::Final && src->m.defined()) {
      t.m = flash_number(src->m.at({r}));
      t.l = flash_number(src->l.at({r}));
    } else if (src && src->kind == FlashEventKind::Tile && src->m_after.defined()) {
      const float m0 = src->m_before.at({r}), m1 = src->m_after.at({r});
      const float l0 = src->l_before.at({r}), l1 = src->l_after.at({r});
      const bool fresh = src == &e;  // only this event's rows show what changed
      t.m = fresh && m0 != m1 ? flash_number(m0) + " → " + flash_number(m1) : flash_number(m1);
      t.l = fresh && l0 != l1 ? flash_number(l0) + " → " + flash_number(l1) : flash_number(l1);
      t.raised = fresh && m1 > m0 && std::isfinite(m0);
      if (t.raised) t.c = "×" + flash_number(src->rescale.at({r}));
    }
    table.push_back(t);
  }
  std::vector<std::string> names, cs, ms;
  for (const RowText& t : table) names.push_back(t.name), cs.push_back(t.c), ms.push_back(t.m), ms.push_back(t.l);
  // The type shrinks (down to kLabelMin) until "before → after" fits its column: a narrow
  // area (the app's panel) keeps the numbers whole rather than cutting them.
  float row_w = 0, c_w = 0, ml_w = 0;
  for (;; size -= 1) {
    row_w = std::min(right.w * 0.3f, std::max(widest(names), text_width(words.row, size)) + 16);
    c_w = std::max(text_width(words.rescale, size), widest(cs)) + 16;
    ml_w = (right.w - row_w - c_w) / 2;
    if (size <= kLabelMin || widest(ms) + 16 <= ml_w) break;
  }
  const float x_m = right.x + row_w + ml_w, x_l = x_m + ml_w, x_c = right.right();  // right edges
  f.text(right.x, y, words.row, size, th.muted, Anchor::Start, false, "label");
  f.text(x_m - 8, y, fit_text(words.max_m, size, ml_w - 16), size, th.muted, Anchor::End, false, "label");
  f.text(x_l - 8, y, fit_text(words.sum_l, size, ml_w - 16), size, th.muted, Anchor::End, false, "label");
  f.text(x_c, y, words.rescale, size, th.muted, Anchor::End, false, "label");
  f.line(right.x, y + line_h / 2, right.right(), y + line_h / 2, th.frame, 1.5f);
  for (size_t i = 0; i < table.size(); ++i) {
    y += line_h;
    const RowText& t = table[i];
    const Color ink = t.current ? th.text : th.muted;
    if (t.current) f.box({right.x - 10, y - line_h / 2, right.w + 20, line_h}, mix(th.background, th.accent, 0.12f));
    out.rows.push_back(first + static_cast<int64_t>(i));
    f.text(right.x, y, fit_text(t.name, size, row_w - 12), size, ink, Anchor::Start, false, "label");
    out.m_text.push_back(f.items.size());
    f.text(x_m - 8, y, fit_text(t.m, size, ml_w - 16), size, t.raised ? th.highlight : ink, Anchor::End, t.raised,
           "value");
    out.l_text.push_back(f.items.size());
    f.text(x_l - 8, y, fit_text(t.l, size, ml_w - 16), size, ink, Anchor::End, false, "value");
    out.rescale_text.push_back(t.c.empty() ? SIZE_MAX : f.items.size());
    if (!t.c.empty()) f.text(x_c, y, t.c, size, th.highlight, Anchor::End, true, "value");
  }
  if (shown < rows) {
    y += line_h;
    f.text(right.x, y, "… " + std::to_string(rows - shown) + " " + words.more_rows, size, th.muted, Anchor::Start,
           false, "note");
  }

  // Fast memory of this visit; slow-memory traffic so far, tiled against standard: a line
  // each, the two counts as labelled bars.
  float by = right.bottom() - bottom_h + 20;
  f.text(right.x, by, fit_text(words.fast_now + ": " + human_bytes(e.fast_bytes), kLabelMin, right.w), kLabelMin,
         th.text, Anchor::Start, false, "label");
  by += 40;
  f.text(right.x, by, fit_text(words.traffic + " (" + words.elements + ")", kLabelMin, right.w), kLabelMin, th.text,
         Anchor::Start, false, "label");
  const int64_t tiled = e.io.reads + e.io.writes, standard = e.io_standard.reads + e.io_standard.writes;
  const std::string t_text = words.tiled + " " + format_count(tiled), s_text = words.standard + " " + format_count(standard);
  const float label_w = std::max(text_width(t_text, kLabelMin), text_width(s_text, kLabelMin)) + 16;
  const float bar_w = std::max(0.0f, right.w - label_w);
  const double most = static_cast<double>(std::max<int64_t>({tiled, standard, 1}));
  for (int k = 0; k < 2; ++k) {
    by += 36;
    const int64_t n = k == 0 ? tiled : standard;
    f.text(right.x, by, k == 0 ? t_text : s_text, kLabelMin, th.text, Anchor::Start, false, "label");
    f.box({right.x + label_w, by - 8, static_cast<float>(bar_w * static_cast<double>(n) / most), 16},
          k == 0 ? th.accent : th.muted);
  }
  return out;
}

}  // namespace attnsim::figure
