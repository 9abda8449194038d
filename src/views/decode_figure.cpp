// One decode call as a figure. See decode_figure.h.
#include "views/decode_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

#include "views/layout.h"
#include "views/slide_scenes.h"
#include "views/transition.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "figure/slide.h"
#include "figure/text_metrics.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

namespace {

constexpr float kLabel = fig::kLabelMin;  // every text: readable on a projector
constexpr float kLine = 40;               // one line of text
constexpr float kLabelW = 130;            // the left column: "tokens", K0 / V0, layer names
constexpr float kQW = 80;                 // a query head's box
constexpr float kQPitchMin = 36;          // a query head's label fits its box
constexpr float kTokenH = 44;
constexpr float kStripMax = 120, kStripMin = 20;  // one K or V strip's height
constexpr float kAlphaRowMax = 40;
constexpr float kPlotMinW = 560, kPlotGap = 60, kPlotBelowH = 300;
constexpr float kGap = 20;

float abs_max(const Tensor& t) {
  float m = 1e-6f;
  for (float v : t.to_vector()) m = std::max(m, std::fabs(v));
  return m;
}

// Slot each new row (j, i) of `heads_step` (B, g, n, dk) lands in: the slot the append view
// `append_step` maps it to, matched by storage index against the cache's own layout (paged:
// the call's append slots). Empty without those steps.
std::vector<int64_t> landing_slots(const DecodeRun& run, const DecodeFrame& f, const Trace& trace,
                                   const char* heads_step, const char* append_step) {
  const Step* kh = trace.find(heads_step);
  const Step* ap = trace.find(append_step);
  if (!kh || !ap || !kh->out.defined()) return {};
  const MhaConfig& a = run.config.attn;
  const int64_t G = a.kv_group_count(), dk = a.head_dim(), n = kh->out.size(2);
  const bool paged = run.config.block_size > 0;
  const Layout from = make_layout(LayoutKind::Stacked, kh->out, 0);  // (g, n, dk)
  const Layout dest = paged ? from : make_layout(LayoutKind::Stacked, ap->out, 0);  // views of the storage
  std::vector<int64_t> slots(static_cast<size_t>(G * n), -1);
  for (int64_t e = 0; e < from.numel(); ++e) {
    const Dims idx = from.index_of(e);  // (j, i, c): a row's dk elements share one slot
    if (idx[1] >= static_cast<int64_t>(f.append_slots.size())) return {};
    int64_t slot = f.append_slots[static_cast<size_t>(idx[1])];
    // The cache storage is contiguous (g, slots, dk), batch 0 first: storage index s is
    // element s, in slot (s / dk) mod slots.
    const int64_t s = dest.storage[static_cast<size_t>(e)];
    if (!paged && s >= 0 && s < G * run.slots * dk) slot = s / dk % run.slots;
    slots[static_cast<size_t>(idx[0] * n + idx[1])] = slot;
  }
  return slots;
}

// Mean of v from position `first` on (the positions some policy evicted for).
double mean_from(const std::vector<double>& v, size_t first) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = first; i < v.size(); ++i) sum += v[i], ++n;
  return n ? sum / static_cast<double>(n) : 0.0;
}

// The by-position plot of a run whose policy evicts: random weights, each position's output
// drift from the full cache; trained weights, each position's loss of the next token with the
// full cache, the policy and a plain window of as many slots (what StreamingLLM measures). The
// axes are fixed for the whole run so that the calls of one deck line up; points up to
// position `shown` - 1.
fig::LinePlot by_position_plot(const DecodeRun& run, size_t shown, lessons::Lang lang) {
  const bool loss = !run.loss_full.empty();
  fig::LinePlot p;
  p.title = loss ? in_lang(lang, "위치별 다음 토큰 손실 (nats)", "Loss of the next token by position (nats)")
                 : in_lang(lang, "위치별 출력의 전체 캐시와의 차이 (무작위 가중치)",
                           "Output drift from the full cache by position (random weights)");
  p.x_unit = in_lang(lang, "위치", "position");
  struct Curve { const std::vector<double>* values; fig::Color colour; std::string name; };
  std::vector<Curve> lines;
  if (loss) lines.push_back({&run.loss_full, fig::rgb(0x888888), in_lang(lang, "전체", "full")});
  if (run.window_text != run.config.policy.text())  // a plain window policy is its own comparison
    lines.push_back({loss ? &run.loss_window : &run.drift_window, fig::rgb(0xd55e00), run.window_text});
  lines.push_back({loss ? &run.loss_policy : &run.drift_policy, fig::rgb(0x0072b2), run.config.policy.text()});
  double top = 1e-9;
  size_t n = 0;
  for (const Curve& l : lines) {
    for (double v : *l.values) top = std::max(top, v);
    n = std::max(n, l.values->size());
  }
  p.x_lo = 0;
  p.x_hi = static_cast<double>(std::max<size_t>(n, 2) - 1);
  p.y_hi = top;
  for (const Curve& l : lines) {
    fig::Series s;
    s.label = l.name;
    if (loss) {  // each one's mean from the first eviction on
      char mean[32];
      std::snprintf(mean, sizeof mean, ": %.2f", mean_from(*l.values, static_cast<size_t>(run.slots)));
      s.label += mean;
    }
    s.color = l.colour;
    for (size_t i = 0; i < std::min(l.values->size(), shown); ++i) s.points.emplace_back(static_cast<double>(i), (*l.values)[i]);
    p.series.push_back(std::move(s));
  }
  fig::Marker m;
  m.x = static_cast<double>(run.slots);
  m.label = in_lang(lang, "처음 밀려나는 위치 ", "first eviction, position ") + std::to_string(run.slots);
  m.color = fig::rgb(0x666666);
  m.dashed = true;
  p.markers.push_back(m);
  return p;
}

// A bar of `frac` of `width` with its text to the right.
void meter(fig::Figure& F, const fig::Theme& th, float x, float y, float width, double frac, fig::Color colour,
           const std::string& text) {
  F.box({x, y + 6, width * static_cast<float>(std::clamp(frac, 0.0, 1.0)), kLine - 12}, colour);
  F.box({x, y + 6, width, kLine - 12}, {0, 0, 0, 0}, th.frame, 1.5f);
  F.text(x + width + 16, y + kLine / 2, text, kLabel, th.text, fig::Anchor::Start, false, "label");
}

constexpr float kMetersH = kLine * 4;

// This model's cache at T_max with MHA, GQA and MQA; the one it has in the accent colour.
void add_meters(fig::Figure& F, const fig::Theme& th, const fig::Rect& r, const DecodeRun& run, lessons::Lang lang) {
  const MhaConfig& a = run.config.attn;
  CostConfig cc;
  cc.d_model = a.d_model, cc.heads = a.heads, cc.layers = run.config.layers, cc.batch = run.sequences;
  cc.seq = run.config.t_max;
  const int64_t g_now = a.kv_group_count();
  // GQA: this model's g when it is grouped, else h/4 (h/2 for h < 8)
  const int64_t g_mid = g_now > 1 && g_now < a.heads ? g_now : a.heads >= 8 ? a.heads / 4 : std::max<int64_t>(a.heads / 2, 1);
  struct Row { const char* name; int64_t g; };
  const Row rows[] = {{"MHA", a.heads}, {"GQA", g_mid}, {"MQA", 1}};
  cc.kv_heads = a.heads;
  const double full = static_cast<double>(compute_cost(cc).kv_cache_bytes_grouped);
  F.text(r.x, r.y + kLine / 2, in_lang(lang, "T_max에서 이 모델의 KV 캐시", "KV cache at T_max, this model"), kLabel, th.text,
         fig::Anchor::Start, false, "label");
  float y = r.y + kLine;
  for (const Row& row : rows) {
    cc.kv_heads = row.g;
    const int64_t bytes = compute_cost(cc).kv_cache_bytes_grouped;
    meter(F, th, r.x + kLabelW, y, std::min(400.0f, r.w * 0.3f), static_cast<double>(bytes) / full,
          row.g == g_now ? th.accent : th.frame, std::string(row.name) + "  g=" + std::to_string(row.g) + ": " + human_bytes(bytes));
    y += kLine;
  }
}

// The words of the pool's part for one call: a line per sequence, the free list, the two
// meters' texts and fractions (what a contiguous T_max per sequence would waste beside paging).
struct PagedWords {
  std::vector<std::string> lines;  // per sequence, then the free list
  std::string contiguous, paged;
  double contiguous_frac = 0, paged_frac = 0;
};

PagedWords paged_words(const DecodeRun& run, const DecodeFrame& f, lessons::Lang lang) {
  PagedWords w;
  std::vector<int64_t> lengths;
  for (size_t s = 0; s < f.tables.size(); ++s) {
    lengths.push_back(f.tables[s].length);
    w.lines.push_back(in_lang(lang, "시퀀스 ", "sequence ") + std::to_string(s) + ": " + std::to_string(f.tables[s].length) +
                      in_lang(lang, "토큰, 블록 테이블 ", " tokens, block table ") + bracket_list(f.tables[s].blocks));
  }
  w.lines.push_back(in_lang(lang, "빈 블록 ", "free list ") + bracket_list(f.free_list));
  CostConfig cc;
  const MhaConfig& a = run.config.attn;
  cc.d_model = a.d_model, cc.heads = a.heads, cc.kv_heads = a.kv_group_count(), cc.layers = run.config.layers;
  const PagedWaste pw = paged_waste(cc, lengths, run.config.block_size, run.config.t_max);
  const double most = static_cast<double>(std::max(pw.contiguous_bytes, pw.paged_bytes));
  w.contiguous = in_lang(lang, "연속, 시퀀스마다 T_max: ", "contiguous, T_max each: ") + human_bytes(pw.contiguous_bytes) +
                 in_lang(lang, ", 낭비 ", ", waste ") + human_bytes(pw.contiguous_bytes - pw.used_bytes);
  w.paged = in_lang(lang, "페이지: ", "paged: ") + human_bytes(pw.paged_bytes) + in_lang(lang, ", 낭비 ", ", waste ") +
            human_bytes(pw.paged_bytes - pw.used_bytes);
  w.contiguous_frac = static_cast<double>(pw.contiguous_bytes) / most;
  w.paged_frac = static_cast<double>(pw.paged_bytes) / most;
  return w;
}

float paged_bar(float width) { return std::min(300.0f, width * 0.15f); }

// Whether the meters fit beside the sequences' lines in `width`: measured on the run's last
// call (its tables are the longest), so every call of a run has the same layout.
bool paged_side_by_side(const DecodeRun& run, float width, lessons::Lang lang) {
  const PagedWords w = paged_words(run, run.frames.back(), lang);
  float lines = 0;
  for (const std::string& l : w.lines) lines = std::max(lines, fig::text_width(l, kLabel));
  const float meters = std::max(fig::text_width(w.contiguous, kLabel), fig::text_width(w.paged, kLabel));
  return kLabelW + 36 + lines + 60 + paged_bar(width) + 16 + meters <= width;
}

// The pool's part: its title, the blocks with their numbers, then a line per sequence and the
// free list, with the two meters beside them where they fit (else under them).
float paged_height(const DecodeRun& run, float width, lessons::Lang lang) {
  const float lines = static_cast<float>(run.sequences + 1) * kLine;
  return kLine + 80 + (paged_side_by_side(run, width, lang) ? std::max(lines, 2 * kLine) : lines + 2 * kLine);
}

// The block pool (each block's filled slots in its sequence's colour), each sequence's block
// table, the free list, and the two meters.
void add_paged(fig::Figure& F, const fig::Theme& th, const fig::Rect& r, const DecodeRun& run, const DecodeFrame& f,
               lessons::Lang lang) {
  const int64_t bs = run.config.block_size, blocks = run.slots / bs;
  std::vector<int64_t> owner(static_cast<size_t>(blocks), -1), fill(static_cast<size_t>(blocks), 0);
  for (size_t s = 0; s < f.tables.size(); ++s)
    for (size_t i = 0; i < f.tables[s].blocks.size(); ++i) {
      const int64_t b = f.tables[s].blocks[i];
      owner[static_cast<size_t>(b)] = static_cast<int64_t>(s);
      fill[static_cast<size_t>(b)] = std::min<int64_t>(bs, f.tables[s].length - static_cast<int64_t>(i) * bs);
    }
  auto seq_colour = [](int64_t s) { return fig::category_colour(s + 3); };
  F.text(r.x, r.y + kLine / 2,
         in_lang(lang, "블록 풀 (층마다 K 저장소 하나, V 저장소 하나)", "Block pool (one storage per layer for K, one for V)"),
         kLabel, th.text, fig::Anchor::Start, false, "label");
  float y = r.y + kLine;
  const float cell = std::min(28.0f, (r.w - kLabelW) / static_cast<float>(blocks * bs + blocks));
  for (int64_t b = 0; b < blocks; ++b) {
    const float x0 = r.x + kLabelW + static_cast<float>(b) * static_cast<float>(bs + 1) * cell;
    for (int64_t c = 0; c < bs; ++c) {
      const fig::Rect slot{x0 + static_cast<float>(c) * cell, y, cell - 2, 36};
      if (owner[static_cast<size_t>(b)] >= 0 && c < fill[static_cast<size_t>(b)])
        F.box(slot, seq_colour(owner[static_cast<size_t>(b)]));
      else
        F.box(slot, {0, 0, 0, 0}, th.frame, 1.5f);
    }
    F.text(x0, y + 36 + 22, std::to_string(b), kLabel, th.muted, fig::Anchor::Start, false, "label");
  }
  y += 80;
  const float lines_top = y;
  const PagedWords w = paged_words(run, f, lang);
  for (size_t i = 0; i < w.lines.size(); ++i) {
    const bool sequence = i + 1 < w.lines.size();
    if (sequence) F.box({r.x + kLabelW, y + 8, 24, 24}, seq_colour(static_cast<int64_t>(i)));
    F.text(r.x + kLabelW + (sequence ? 36 : 0), y + kLine / 2, w.lines[i], kLabel, th.text, fig::Anchor::Start, false,
           "label");
    y += kLine;
  }
  const float bar = paged_bar(r.w);
  float mx = r.x + kLabelW;  // the meters: under the lines, or right-aligned beside them
  if (paged_side_by_side(run, r.w, lang)) {
    mx = r.right() - bar - 16 - std::max(fig::text_width(w.contiguous, kLabel), fig::text_width(w.paged, kLabel));
    y = lines_top;
  }
  meter(F, th, mx, y, bar, w.contiguous_frac, fig::category_colour(5), w.contiguous);
  meter(F, th, mx, y + kLine, bar, w.paged_frac, fig::category_colour(2), w.paged);
}

fig::Rect lerp_rect(const fig::Rect& a, const fig::Rect& b, float t) {
  return {a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.w + (b.w - a.w) * t, a.h + (b.h - a.h) * t};
}

// Columns [c0, c1) of strip j (a K or V cache (g, t', dk)) as one heatmap, slots across.
void add_strip(fig::Figure& F, const fig::Theme& th, const Tensor& c, int64_t j, int64_t c0, int64_t c1, float x, float y,
               float cell, float h, float m) {
  if (c1 <= c0) return;
  const int64_t dk = c.size(2);
  fig::Heatmap hm;
  hm.rect = {x + static_cast<float>(c0) * cell, y, static_cast<float>(c1 - c0) * cell, h};
  hm.rows = dk;
  hm.cols = c1 - c0;
  hm.values.reserve(static_cast<size_t>(dk * (c1 - c0)));
  for (int64_t e = 0; e < dk; ++e)
    for (int64_t t = c0; t < c1; ++t) hm.values.push_back(c.at({j, t, e}));
  hm.map = fig::ColorMapId::Diverging;
  hm.lo = -m;
  hm.hi = m;
  hm.gap = th.gap;
  F.heatmap(std::move(hm));
}

}  // namespace

std::string bracket_list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

int64_t default_cache_layer(const DecodeRun& run) { return run.trained ? run.config.layers - 1 : 0; }

int64_t slot_of(const DecodeFrame& f, int64_t p) {
  const auto it = std::find(f.slot_positions.begin(), f.slot_positions.end(), p);
  return it == f.slot_positions.end() ? -1 : static_cast<int64_t>(it - f.slot_positions.begin());
}

float alpha_scale(const DecodeFrame& f, const std::vector<int64_t>& layers) {
  float top = 1e-6f;  // colours run to the largest weight shown (1/t' is dark otherwise)
  for (int64_t l : layers)
    for (float v : f.alpha[static_cast<size_t>(l)].to_vector()) top = std::max(top, v);
  return top;
}

DecodeLayout add_decode_view(fig::Figure& F, const fig::Theme& th, const fig::Rect& V, const DecodeFigureSpec& spec) {
  const DecodeRun& run = *spec.run;
  if (spec.frame >= run.frames.size())
    throw Error("decode call " + std::to_string(spec.frame) + " is outside 0.." +
                std::to_string(static_cast<int64_t>(run.frames.size()) - 1));
  const int64_t L = run.config.layers;
  const std::vector<int64_t> layers = spec.alpha_layers.empty() ? std::vector<int64_t>{spec.cache_layer} : spec.alpha_layers;
  for (int64_t l : layers)
    if (l < 0 || l >= L || spec.cache_layer < 0 || spec.cache_layer >= L)
      throw Error("layer " + std::to_string(l < 0 || l >= L ? l : spec.cache_layer) + " is outside the decode run's 0.." +
                  std::to_string(L - 1));
  const DecodeFrame& f = run.frames[spec.frame];
  const lessons::Lang lang = spec.lang;
  const MhaConfig& a = run.config.attn;
  const int64_t h = a.heads, G = a.kv_group_count(), r = h / G;
  const bool paged = run.config.block_size > 0;
  const int64_t bs = run.config.block_size;
  const size_t cl = static_cast<size_t>(spec.cache_layer);
  const Tensor& k = f.k_cache[cl];  // (g, t', dk)
  const Tensor& v = f.v_cache[cl];
  const Trace& trace = f.traces[cl];
  const int64_t filled = k.size(1);
  // The slots a strip shows: contiguous, every preallocated slot; paged, sequence 0's blocks.
  const int64_t strip_slots = paged ? (filled + bs - 1) / bs * bs : run.slots;
  const float k_max = abs_max(k), v_max = abs_max(v), alpha_hi = alpha_scale(f, layers);
  const bool evicting = !paged && run.config.policy.kind != PolicyKind::Full;
  const bool has_plot = !paged && !run.drift_policy.empty();
  DecodeLayout out;

  // Columns: every position and the next token. An evicting policy's by-position plot takes
  // the right of the area beside the cache and the alpha blocks (both span the slots only)
  // where that leaves it kPlotMinW. The query heads sit next to the strips.
  const int64_t columns = std::max<int64_t>(run.config.t_max + 1, strip_slots);
  const float cell = std::min(64.0f, (V.w - kLabelW - kQW - 120) / static_cast<float>(columns));
  const float x0 = V.x + kLabelW;
  auto col_x = [&](int64_t c) { return x0 + static_cast<float>(c) * cell; };
  const float near_qx = col_x(strip_slots) + 100;
  out.plot_beside = has_plot && V.right() - (near_qx + kQW + kPlotGap) >= kPlotMinW;
  const float qx = near_qx;

  // Heights: the tokens, the strips, the k_grouped line, the alpha heading and blocks, the
  // slot positions, the part below. The strips and alpha share what is left; the meters are
  // left out where they would squeeze a strip under kStripMin (the paged pool and the plot
  // are what their scenarios are about: never).
  const Step* kg = trace.find("k_grouped");
  const bool grouped_line = kg && kg->out.defined() && G < h;
  // Labels that do not fit their columns (a language model's word pieces, or more positions
  // than the width holds letters): the text so far gets a line of its own above the cells,
  // which keep the positions.
  bool words = false;
  for (size_t p = 0; p <= f.tokens.size() && !words; ++p)
    words = fig::text_width(run.label(p == f.tokens.size() ? f.next : f.tokens[p]), kLabel) > cell - 8;
  const float text_h = words ? kLine : 0;
  const float top = V.y + text_h + kTokenH + kGap;
  const float fixed = (grouped_line ? kLine : 0) + kGap + kLine + kLine + 12 * static_cast<float>(layers.size() - 1);
  const float nl = static_cast<float>(layers.size());
  auto split = [&](float below, float* strips, float* alpha_rows) {
    const float room = std::max(0.0f, V.bottom() - top - fixed - below);
    *alpha_rows = std::min(room * (layers.size() == 1 ? 0.33f : 0.4f), nl * static_cast<float>(h) * kAlphaRowMax);
    *strips = room - *alpha_rows;
  };
  float below = paged ? paged_height(run, V.w, lang) + kGap : has_plot ? (out.plot_beside ? 0.0f : kPlotBelowH + kGap) : kMetersH + kGap;
  float strips_h = 0, alpha_h = 0;
  split(below, &strips_h, &alpha_h);
  const bool meters = !paged && !has_plot && (strips_h / static_cast<float>(G) - 14) / 2 >= kStripMin;
  if (!paged && !has_plot && !meters) {
    below = 0;
    split(below, &strips_h, &alpha_h);
  }

  // Row 1: the tokens fed so far (this call's outlined; evicted ones struck through; the
  // induction target in the highlight colour) and the predicted next one.
  if (words) {  // the prompt, then what decode wrote (accent), then the predicted next piece (muted)
    auto piece = [&](int64_t id) {
      std::string t = run.label(id);
      for (size_t at; (at = t.find("·")) != std::string::npos;) t.replace(at, std::string("·").size(), " ");
      return t;
    };
    std::string fed, wrote;
    for (size_t p = 0; p < f.tokens.size(); ++p) (f.generated && static_cast<int64_t>(p) >= run.prompt_length ? wrote : fed) += piece(f.tokens[p]);
    if (!f.generated) wrote.clear();
    const float room = V.right() - x0;
    const std::string next = fig::fit_text(piece(f.next), kLabel, room / 4);
    const std::string head = fig::fit_text(fed, kLabel, room - fig::text_width(next, kLabel) - 8);
    const std::string tail = fig::fit_text(wrote, kLabel, room - fig::text_width(head, kLabel) - fig::text_width(next, kLabel) - 8);
    const std::pair<std::string, fig::Color> parts[] = {{head, th.text}, {tail, th.accent}, {next, th.muted}};
    float x = x0;
    for (const auto& [text, colour] : parts) {
      F.text(x, V.y + kLine / 2, text, kLabel, colour, fig::Anchor::Start, false, "label");
      x += fig::text_width(text, kLabel);
    }
    F.text(V.x, V.y + kLine / 2, in_lang(lang, "텍스트", "text"), kLabel, th.muted, fig::Anchor::Start, false, "label");
  }
  const float ty = V.y + text_h;
  F.text(V.x, ty + kTokenH / 2, in_lang(lang, "토큰", "tokens"), kLabel, th.muted, fig::Anchor::Start, false, "label");
  for (size_t p = 0; p <= f.tokens.size(); ++p) {
    const int64_t pos = static_cast<int64_t>(p);
    const bool next = p == f.tokens.size(), fresh = !next && pos >= f.first_position;
    const bool kept = next || !evicting || slot_of(f, pos) >= 0;
    const fig::Rect c{col_x(pos) + 2, ty, cell - 4, kTokenH};
    if (next)
      F.box(c, {0, 0, 0, 0}, th.muted, 1.5f);
    else
      F.box(c, th.gap, fresh ? th.accent : pos == f.copy_source ? th.highlight : th.frame,
            fresh || pos == f.copy_source ? 4.0f : 1.0f);
    if (cell >= 24 && !words)
      F.text(c.x + c.w / 2, ty + kTokenH / 2, run.label(next ? f.next : f.tokens[p]), kLabel, kept ? th.text : th.muted,
             fig::Anchor::Middle, false, "label");
    if (!kept) F.line(c.x, c.bottom(), c.right(), c.y, th.muted, 3);
  }

  // Row 2: the K and V strips of one layer (per K/V head, slots across, d_k down; K over V)
  // and the query heads they feed; group j's band holds its r query heads.
  const float band = strips_h / static_cast<float>(G);
  const float q_pitch = band / static_cast<float>(r);
  const bool q_labels = q_pitch >= kQPitchMin;
  const float strip_h = std::clamp((band - 14) / 2, 2.0f, kStripMax);
  const float inner = std::min(6.0f, band * 0.05f);
  // While the new rows fly, the slots they land in stay empty.
  const bool flying = spec.flight < 1.0f;
  const std::vector<int64_t> k_dest = flying ? landing_slots(run, f, trace, "k_heads", "k_cache_append") : std::vector<int64_t>{};
  const std::vector<int64_t> v_dest = flying ? landing_slots(run, f, trace, "v_heads", "v_cache_append") : std::vector<int64_t>{};
  const bool flight = flying && !k_dest.empty() && !v_dest.empty();
  const std::set<int64_t> landing = flight ? std::set<int64_t>(f.append_slots.begin(), f.append_slots.end()) : std::set<int64_t>{};
  auto k_y = [&](int64_t j) { return top + static_cast<float>(j) * band + (band - 2 * strip_h - inner) / 2; };
  auto v_y = [&](int64_t j) { return k_y(j) + strip_h + inner; };
  for (int64_t j = 0; j < G; ++j) {
    const float by = top + static_cast<float>(j) * band, ky = k_y(j), vy = v_y(j);
    F.box({V.x, ky + strip_h - 14, 14, 28 + inner}, fig::category_colour(j));
    if (strip_h + inner >= kLabel * 1.3f) {  // a line each for K and V
      F.text(V.x + 22, ky + strip_h / 2, "K" + std::to_string(j), kLabel, th.text, fig::Anchor::Start, false, "label");
      F.text(V.x + 22, vy + strip_h / 2, "V" + std::to_string(j), kLabel, th.text, fig::Anchor::Start, false, "label");
    } else if (band >= kLabel * 1.2f) {
      F.text(V.x + 22, ky + strip_h + inner / 2, "K/V" + std::to_string(j), kLabel, th.text, fig::Anchor::Start, false,
             "label");
    }
    const std::tuple<const Tensor*, float, float> caches[] = {{&k, ky, k_max}, {&v, vy, v_max}};
    for (const auto& [c, sy, m] : caches) {
      int64_t run_start = 0;  // runs of filled slots that are not landing
      for (int64_t t = 0; t <= filled; ++t)
        if (t == filled || landing.count(t)) {
          add_strip(F, th, *c, j, run_start, t, x0, sy, cell, strip_h, m);
          run_start = t + 1;
        }
      for (int64_t t = 0; t < strip_slots; ++t)  // preallocated and still empty, or waiting for its row
        if (t >= filled || landing.count(t))
          F.box({col_x(t) + 1, sy + 1, cell - 2, strip_h - 2}, {0, 0, 0, 0}, th.frame, 1.0f);
    }
    if (!flying)
      for (int64_t t : f.append_slots)  // what this call wrote, in K and in V
        if (t >= 0 && t < strip_slots) F.box({col_x(t), ky - 3, cell, 2 * strip_h + inner + 6}, {0, 0, 0, 0}, th.accent, 4.0f);
    if (paged)  // block boundaries
      for (int64_t b = 0; b <= strip_slots / bs; ++b)
        F.line(col_x(b * bs), ky - 8, col_x(b * bs), vy + strip_h + 8, th.text, 2);
    // The stride-0 broadcast: K/V head j to its r query heads, growing while the rows fly.
    const float sx = col_x(strip_slots) + 8, sy = ky + strip_h + inner / 2;
    for (int64_t q = 0; q < r; ++q) {
      const int64_t head = j * r + q;
      const float qy = by + static_cast<float>(q) * q_pitch + 2, qh = std::max(q_pitch - 4, 2.0f);
      const float grow = flying && r > 1
                             ? ease(std::clamp(spec.flight * 1.6f - 0.6f * static_cast<float>(q) / static_cast<float>(r), 0.0f, 1.0f))
                             : 1.0f;
      const float ex = qx - 4, ey = qy + qh / 2;
      if (grow > 0) F.line(sx, sy, sx + (ex - sx) * grow, sy + (ey - sy) * grow, fig::category_colour(j), 2.5f);
      F.box({qx, qy, kQW, qh}, fig::category_colour(j));
      if (q_labels)
        F.text(qx + kQW / 2, qy + qh / 2, "q" + std::to_string(head), kLabel, fig::rgb(0x111111), fig::Anchor::Middle,
               true, "label");
    }
  }
  out.strips = {x0, top, static_cast<float>(strip_slots) * cell, strips_h};
  float y = top + strips_h;
  // The texts left of the plot end where it starts.
  const float left_end = out.plot_beside ? qx + kQW + kPlotGap / 2 : V.right();
  if (grouped_line) {  // without the shape where the line is too long, the strides cut last
    const std::string strides = in_lang(lang, "스트라이드 ", "strides ") + format_dims(kg->out.strides()) +
                                in_lang(lang, " · 복사 없음", " · no copy");
    std::string line = "k_grouped " + format_dims(kg->out.shape()) + " " + strides;
    if (fig::text_width(line, kLabel) > left_end - x0) line = "k_grouped " + strides;
    F.text(x0, y + kLine / 2, fig::fit_text(line, kLabel, left_end - x0), kLabel, th.muted, fig::Anchor::Start, false,
           "label");
    y += kLine;
  }

  // Row 3: alpha of the call's last row, one block per layer, per query head, over the slots;
  // the trained model's induction target outlined in each.
  y += kGap;
  const std::string heading = in_lang(lang, "alpha: 이번 호출 마지막 행의 가중치, 질의 헤드마다",
                                      "alpha: this call's last row, per query head");
  F.text(V.x, y + kLine / 2, fig::fit_text(heading, kLabel, left_end - V.x), kLabel, th.text, fig::Anchor::Start, false,
         "label");
  const int64_t copy_slot = f.copy_source >= 0 ? slot_of(f, f.copy_source) : -1;
  if (copy_slot >= 0) {  // the trained model: where an induction head should look
    const std::string note = (lang == lessons::Lang::Ko ? "테두리: 위치 " : "outlined: position ") +
                             std::to_string(f.copy_source) +
                             (lang == lessons::Lang::Ko ? ": 앞선 '" : ", after the earlier '") +
                             run.label(f.tokens[static_cast<size_t>(f.copy_source - 1)]) +
                             (lang == lessons::Lang::Ko ? "' 바로 뒤" : "'");
    const float nx = V.x + fig::text_width(heading, kLabel) + 40;
    if (nx + fig::text_width(note, kLabel) <= left_end)
      F.text(nx, y + kLine / 2, note, kLabel, th.highlight, fig::Anchor::Start, false, "label");
  }
  y += kLine;
  const float rh = std::max(1.0f, std::min(kAlphaRowMax, alpha_h / (nl * static_cast<float>(h))));
  const float block_h = rh * static_cast<float>(h);
  for (size_t li = 0; li < layers.size(); ++li) {
    const Tensor& al = f.alpha[static_cast<size_t>(layers[li])];  // (h, t')
    const float by = y;
    fig::Heatmap am;
    am.rect = {x0, by, static_cast<float>(al.size(1)) * cell, block_h};
    am.rows = h;
    am.cols = al.size(1);
    am.values = al.contiguous().to_vector();
    am.map = fig::ColorMapId::Viridis;
    am.lo = 0;
    am.hi = alpha_hi;
    am.gap = th.gap;
    if (am.cols > 0) F.heatmap(std::move(am));
    for (int64_t i = 0; i < h; ++i)
      F.box({x0 - 18, by + static_cast<float>(i) * rh + std::min(1.0f, rh * 0.1f), 12, std::max(rh - 2, 0.5f)},
            fig::category_colour(i / r));
    const std::string name = (lang == lessons::Lang::Ko ? "층 " : "layer ") + std::to_string(layers[li]);
    if (block_h >= kLabel * 1.2f)
      F.text(V.x, by + block_h / 2, name, kLabel, th.text, fig::Anchor::Start, false, "label");
    if (copy_slot >= 0 && copy_slot < al.size(1))
      F.box({col_x(copy_slot) - 2, by - 2, cell + 4, block_h + 4}, {0, 0, 0, 0}, th.highlight, 4.0f);
    y = by + block_h + (li + 1 < layers.size() ? 12 : 0);
  }
  // which position each slot holds (differs from the slot once a window rolls)
  const int64_t n = f.alpha[static_cast<size_t>(layers[0])].size(1);
  float last_right = -1e9f;
  for (int64_t t = 0; t < n && t < static_cast<int64_t>(f.slot_positions.size()); ++t) {
    const std::string p = std::to_string(f.slot_positions[static_cast<size_t>(t)]);
    const float cx = col_x(t) + cell / 2;
    const float w = fig::text_width(p, kLabel);
    if (cx - w / 2 < last_right + 6) continue;
    F.text(cx, y + kLine / 2, p, kLabel, th.muted, fig::Anchor::Middle, false, "label");
    last_right = cx + w / 2;
  }
  y += kLine;

  // Below: the pool, the plot or the meters.
  if (paged) {
    add_paged(F, th, {V.x, y + kGap, V.w, paged_height(run, V.w, lang)}, run, f, lang);
    y += kGap + paged_height(run, V.w, lang);
  } else if (has_plot) {
    const float px = qx + kQW + kPlotGap;
    out.plot_area = out.plot_beside ? fig::Rect{px, top, V.right() - px, std::max(y, top + strips_h) - top}
                                    : fig::Rect{V.x, y + kGap, V.w, std::max(kPlotBelowH, V.bottom() - y - kGap)};
    out.plot = fig::add_line_plot(F, th, out.plot_area, by_position_plot(run, f.tokens.size(), lang));
    if (!out.plot_beside) y = out.plot_area.bottom();
  } else if (meters) {
    add_meters(F, th, {V.x, y + kGap, V.w, kMetersH}, run, lang);
    y += kGap + kMetersH;
  }
  out.bottom = y;

  // The flight, over everything: each new row from its token down into its slot, eased,
  // lifted off the strips mid-way, with a shadow and an outline so it reads apart from the
  // filled cells it passes over.
  if (flight) {
    const float e = ease(spec.flight), lift = 30.0f * std::sin(3.14159265f * e);
    const Step* heads[] = {trace.find("k_heads"), trace.find("v_heads")};
    const int64_t rows = heads[0]->out.size(2), dk = a.head_dim();
    for (int64_t kv = 0; kv < 2; ++kv)
      for (int64_t j = 0; j < G; ++j)
        for (int64_t i = 0; i < rows; ++i) {
          const int64_t slot = (kv == 0 ? k_dest : v_dest)[static_cast<size_t>(j * rows + i)];
          if (slot < 0) continue;
          const fig::Rect from{col_x(f.first_position + i) + 2, ty, cell - 4, kTokenH};
          const fig::Rect to{col_x(slot), kv == 0 ? k_y(j) : v_y(j), cell, strip_h};
          fig::Rect m = lerp_rect(from, to, e);
          m.y -= lift;
          F.box({m.x + 6, m.y + 6, m.w, m.h}, {0, 0, 0, 0.3f});
          fig::Heatmap row;
          row.rect = m;
          row.rows = dk;
          row.cols = 1;
          for (int64_t c = 0; c < dk; ++c) row.values.push_back(heads[kv]->out.at({0, j, i, c}));
          row.map = fig::ColorMapId::Diverging;
          row.lo = -(kv == 0 ? k_max : v_max);
          row.hi = -row.lo;
          row.gap = th.gap;
          F.heatmap(std::move(row));
          F.box({m.x - 3, m.y - 3, m.w + 6, m.h + 6}, {0, 0, 0, 0}, th.accent, 3.0f);
        }
  }
  return out;
}

}  // namespace attnsim::app
