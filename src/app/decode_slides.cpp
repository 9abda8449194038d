// Decode scenarios as slides. See decode_slides.h.
#include "app/decode_slides.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "engine/cost.h"
#include "engine/error.h"
#include "figure/palette.h"
#include "figure/plot.h"
#include "figure/slide.h"
#include "figure/text_metrics.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

namespace {

const char* T(lessons::Lang lang, const char* ko, const char* en) { return lang == lessons::Lang::Ko ? ko : en; }

// The app's head colours (heat_view.cpp, Okabe-Ito): one per K/V group.
fig::Color group_colour(int64_t j) {
  static const unsigned kColours[] = {0xe69f00, 0x56b4e9, 0x009e73, 0xf0e442,
                                      0x0072b2, 0xd55e00, 0xcc79a7, 0x999999};
  return fig::rgb(kColours[static_cast<size_t>(std::max<int64_t>(j, 0)) % 8]);
}

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Positions as sorted ranges, "0, 33–47": which positions a rolling cache holds, short enough
// for the caption (the alpha blocks' labels give each slot's position).
std::string ranges_text(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  std::string s;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    s += (i ? ", " : "") + std::to_string(v[i]) + (j > i ? "–" + std::to_string(v[j]) : "");
    i = j + 1;
  }
  return s;
}

std::string title_of(const DecodeRun& run, const DecodeFrame& f, size_t frame, lessons::Lang lang) {
  const bool ko = lang == lessons::Lang::Ko;
  if (frame == 0)
    return ko ? "프리필: 프롬프트 토큰 " + std::to_string(f.rows) + "개를 한 번에 캐시로"
              : "Prefill: " + std::to_string(f.rows) + " prompt tokens into the cache at once";
  const std::string tok = run.label(f.tokens[static_cast<size_t>(f.first_position)]);
  const std::string pos = std::to_string(f.first_position), n = std::to_string(frame);
  if (ko) return "걸음 " + n + ": 위치 " + pos + "의 '" + tok + "'" + (f.generated ? " (생성)" : " (프롬프트)");
  return "Step " + n + ": '" + tok + "' at position " + pos + (f.generated ? " (generated)" : " (prompt)");
}

// The layer whose cache a slide draws: the trained model's last (its induction heads read
// it), else layer 0. Every layer's cache has the same slots and the same append.
int64_t cache_layer(const DecodeRun& run) { return run.trained ? run.config.layers - 1 : 0; }

// Slot of position p in this frame, -1 when evicted.
int64_t slot_of(const DecodeFrame& f, int64_t p) {
  const auto it = std::find(f.slot_positions.begin(), f.slot_positions.end(), p);
  return it == f.slot_positions.end() ? -1 : static_cast<int64_t>(it - f.slot_positions.begin());
}

// Trained model, a token seen before: how much the last layer's most attentive head puts on
// the slot after the earlier copy (what an induction head reads), and what the model predicts.
std::string induction_of(const DecodeRun& run, const DecodeFrame& f, lessons::Lang lang) {
  const int64_t slot = f.copy_source >= 0 ? slot_of(f, f.copy_source) : -1;
  if (slot < 0) return "";
  const Tensor& al = f.alpha[static_cast<size_t>(run.config.layers - 1)];  // (h, t')
  int64_t best = 0;
  for (int64_t i = 1; i < al.size(0); ++i)
    if (al.at({i, slot}) > al.at({best, slot})) best = i;
  char w[16];
  std::snprintf(w, sizeof w, "%.2f", static_cast<double>(al.at({best, slot})));
  const std::string layer = std::to_string(run.config.layers - 1), head = std::to_string(best);
  const std::string pos = std::to_string(f.copy_source), next = run.label(f.next);
  const std::string earlier = run.label(f.tokens[static_cast<size_t>(f.copy_source - 1)]);
  if (lang == lessons::Lang::Ko)
    return "층 " + layer + "의 q" + head + "가 위치 " + pos + "(앞선 '" + earlier + "' 바로 뒤)에 " + w +
           "을 준다. 다음 토큰 예측: '" + next + "'. ";
  return "Layer " + layer + "'s q" + head + " puts " + w + " on position " + pos + ", just after the earlier '" +
         earlier + "'; it predicts '" + next + "'. ";
}

std::string caption_of(const DecodeRun& run, const DecodeFrame& f, lessons::Lang lang) {
  const MhaConfig& a = run.config.attn;
  const int64_t g = a.kv_group_count(), r = a.heads / g;
  const std::string used = human_bytes(f.used_bytes) + " / " + human_bytes(run.storage_bytes);
  const std::string induction = run.trained ? induction_of(run, f, lang) : "";
  if (!induction.empty() && run.config.policy.kind == PolicyKind::Full) return induction;
  if (run.config.block_size > 0) {
    std::string tables;
    for (size_t s = 0; s < f.tables.size(); ++s)
      tables += (s ? ", " : "") + std::string(T(lang, "시퀀스 ", "seq ")) + std::to_string(s) + " " +
                list_text(f.tables[s].blocks);
    return std::string(T(lang, "블록 테이블: ", "Block tables: ")) + tables + T(lang, "; 빈 블록 ", "; free ") +
           list_text(f.free_list) + T(lang, ". 캐시 사용 ", ". Cache used ") + used + ".";
  }
  std::string what;
  if (run.config.policy.kind != PolicyKind::Full)
    what = std::string(T(lang, "정책 ", "Policy ")) + run.config.policy.text() + ": " + std::to_string(run.slots) +
           T(lang, "칸이 위치 ", " slots hold positions ") + ranges_text(f.slot_positions) + T(lang, "를 담는다", "");
  else if (g == a.heads)
    what = T(lang, "질의 헤드마다 자기 K/V 헤드 (MHA)", "Every query head has its own K/V head (MHA)");
  else
    what = std::string(T(lang, "K/V 헤드 하나가 stride 0 뷰로 질의 헤드 ", "Each K/V head feeds ")) +
           std::to_string(r) + T(lang, "개를 먹인다 (복사 없음)", " query heads through a stride-0 view (no copy)");
  return what + T(lang, ". 캐시 사용 ", ". Cache used ") + used + " (" + std::to_string(run.config.layers) +
         T(lang, "층, K와 V).", " layers, K and V).");
}

// Mean of v from position `first` on (the decode panel's legend means).
double mean_from(const std::vector<double>& v, size_t first) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = first; i < v.size(); ++i) sum += v[i], ++n;
  return n ? sum / static_cast<double>(n) : 0.0;
}

// The by-position plot of a run whose policy evicts (decode_panel's draw_by_position as a
// figure): the axes fixed for the whole run so that the slides of one deck line up, points
// up to position `shown` - 1.
fig::LinePlot by_position_plot(const DecodeRun& run, size_t shown, lessons::Lang lang) {
  const bool loss = !run.loss_full.empty();
  fig::LinePlot p;
  p.title = loss ? T(lang, "위치별 다음 토큰 손실 (nats)", "Loss of the next token by position (nats)")
                 : T(lang, "위치별 출력의 전체 캐시와의 차이 (무작위 가중치)",
                     "Output drift from the full cache by position (random weights)");
  p.x_unit = T(lang, "위치", "position");
  struct Curve { const std::vector<double>* values; fig::Color colour; std::string name; };
  std::vector<Curve> lines;
  if (loss) lines.push_back({&run.loss_full, fig::rgb(0x888888), T(lang, "전체", "full")});
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
    if (loss) {
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
  m.label = T(lang, "처음 밀려나는 위치 ", "first eviction, position ") + std::to_string(run.slots);  // the means start here
  m.color = fig::rgb(0x666666);
  m.dashed = true;
  p.markers.push_back(m);
  return p;
}

}  // namespace

DecodeSlide decode_slide(const Scenario& scenario, const DecodeRun& run, size_t frame, lessons::Lang lang,
                            const std::string& theme, const std::string& title, const std::string& caption) {
  if (frame >= run.frames.size())
    throw Error("decode call " + std::to_string(frame) + " is outside 0.." +
                std::to_string(static_cast<int64_t>(run.frames.size()) - 1));
  const DecodeFrame& f = run.frames[frame];
  const fig::Theme& th = fig::theme_by_name(theme);
  const MhaConfig& a = run.config.attn;
  const int64_t h = a.heads, G = a.kv_group_count(), r = h / G, dk = a.head_dim(), L = run.config.layers;
  const bool paged = run.config.block_size > 0;
  const int64_t bs = run.config.block_size;
  const int64_t cl = cache_layer(run);
  const Tensor& k = f.k_cache[static_cast<size_t>(cl)];  // (g, t', dk)
  const Tensor& v = f.v_cache[static_cast<size_t>(cl)];
  const int64_t filled = k.size(1);
  // The slots a strip shows: contiguous, every preallocated slot; paged, sequence 0's blocks.
  const int64_t strip_slots = paged ? (filled + bs - 1) / bs * bs : run.slots;

  float alpha_max = 1e-6f, k_max = 1e-6f, v_max = 1e-6f;  // one alpha scale for every layer
  for (const Tensor& al : f.alpha)
    for (float x : al.to_vector()) alpha_max = std::max(alpha_max, x);
  for (float x : k.to_vector()) k_max = std::max(k_max, std::fabs(x));
  for (float x : v.to_vector()) v_max = std::max(v_max, std::fabs(x));

  fig::SlideSpec spec;
  spec.title = title.empty() ? title_of(run, f, frame, lang) : title;
  spec.caption = caption.empty() ? caption_of(run, f, lang) : caption;
  spec.footer = "attnsim · " + scenario.name + " · " + T(lang, "디코딩 호출 ", "decode call ") +
                std::to_string(frame) + " / " + std::to_string(run.frames.size() - 1) + " · " +
                (lang == lessons::Lang::Ko ? "층 " + std::to_string(cl) + "의 K/V 캐시, 모든 층의 alpha"
                                           : "layer " + std::to_string(cl) + "'s K/V cache, every layer's alpha");
  spec.legend.map = fig::ColorMapId::Viridis;
  spec.legend.lo = 0;
  spec.legend.hi = alpha_max;
  spec.legend.what = T(lang, "alpha: 이번 호출의 마지막 행", "alpha: this call's last row");
  fig::Slide s = fig::make_slide(spec, th);
  fig::Figure& F = s.figure;
  const fig::Rect V = s.visual;

  constexpr float kLabelW = 130, kQW = 80, kLabel = fig::kLabelMin, kQPitchMin = 36;
  const int64_t columns = std::max<int64_t>(run.config.t_max + 1, strip_slots);
  const float cell = std::min(64.0f, (V.w - kLabelW - kQW - 120) / static_cast<float>(columns));
  const float x0 = V.x + kLabelW;
  auto col_x = [&](int64_t c) { return x0 + static_cast<float>(c) * cell; };
  // An evicting policy's by-position plot takes the right of the slide, beside the cache and
  // the alpha blocks (both span the slots only), the query heads next to the strips; where
  // that leaves under kPlotMinW (many slots) the slide has no plot.
  constexpr float kPlotMinW = 560, kPlotGap = 60;
  const float near_qx = col_x(strip_slots) + 100;
  const bool plot = !paged && !run.drift_policy.empty() && V.right() - (near_qx + kQW + kPlotGap) >= kPlotMinW;
  const float qx = plot ? near_qx : V.right() - kQW;

  // Row 1: the tokens fed so far (this call's outlined; evicted ones struck through) and the
  // predicted next one.
  const float ty = V.y;
  F.text(V.x, ty + 22, T(lang, "토큰", "tokens"), kLabel, th.muted, fig::Anchor::Start, false, "label");
  const bool evicting = !paged && run.config.policy.kind != PolicyKind::Full;
  for (size_t p = 0; p <= f.tokens.size(); ++p) {
    const int64_t pos = static_cast<int64_t>(p);
    const bool next = p == f.tokens.size(), fresh = !next && pos >= f.first_position;
    const bool kept = next || !evicting || slot_of(f, pos) >= 0;
    const fig::Rect c{col_x(pos) + 2, ty, cell - 4, 44};
    if (next)
      F.box(c, {0, 0, 0, 0}, th.muted, 1.5f);
    else
      F.box(c, th.gap, fresh ? th.accent : th.frame, fresh ? 4.0f : 1.0f);
    if (cell >= 24)
      F.text(c.x + c.w / 2, ty + 22, run.label(next ? f.next : f.tokens[p]), kLabel, kept ? th.text : th.muted,
             fig::Anchor::Middle, false, "label");
    if (!kept) F.line(c.x, c.bottom(), c.right(), c.y, th.muted, 3);
  }

  // Row 2: the K and V strips of one layer (per K/V head, slots across, d_k down; K over V)
  // and the query heads they feed; group j's band holds its r query heads.
  const float top = ty + 44 + 24;
  const float band = V.h * 0.46f / static_cast<float>(G);
  const float q_pitch = band / static_cast<float>(r);
  const bool q_labels = q_pitch >= kQPitchMin;
  const float strip_h = std::min(120.0f, (band - 14) / 2);
  for (int64_t j = 0; j < G; ++j) {
    const float by = top + static_cast<float>(j) * band, ky = by + (band - 2 * strip_h - 6) / 2;
    const float vy = ky + strip_h + 6;
    F.box({V.x, ky + strip_h - 14, 14, 34}, group_colour(j));
    if (band >= 2 * kLabel * 1.2f) {
      F.text(V.x + 22, ky + strip_h / 2, "K" + std::to_string(j), kLabel, th.text, fig::Anchor::Start, false, "label");
      F.text(V.x + 22, vy + strip_h / 2, "V" + std::to_string(j), kLabel, th.text, fig::Anchor::Start, false, "label");
    } else {
      F.text(V.x + 22, ky + strip_h + 3, "K/V" + std::to_string(j), kLabel, th.text, fig::Anchor::Start, false, "label");
    }
    const std::tuple<const Tensor*, float, float> caches[] = {{&k, ky, k_max}, {&v, vy, v_max}};
    for (const auto& [c, sy, m] : caches) {
      fig::Heatmap hm;
      hm.rect = {x0, sy, static_cast<float>(filled) * cell, strip_h};
      hm.rows = dk;
      hm.cols = filled;
      for (int64_t e = 0; e < dk; ++e)
        for (int64_t t = 0; t < filled; ++t) hm.values.push_back(c->at({j, t, e}));
      hm.map = fig::ColorMapId::Diverging;
      hm.lo = -m;
      hm.hi = m;
      hm.gap = th.gap;
      if (filled > 0) F.heatmap(hm);
      for (int64_t t = filled; t < strip_slots; ++t)  // preallocated, still empty
        F.box({col_x(t) + 1, sy + 1, cell - 2, strip_h - 2}, {0, 0, 0, 0}, th.frame, 1.0f);
    }
    for (int64_t t : f.append_slots)  // what this call wrote, in K and in V
      if (t >= 0 && t < strip_slots) F.box({col_x(t), ky - 3, cell, 2 * strip_h + 12}, {0, 0, 0, 0}, th.accent, 4.0f);
    if (paged)  // block boundaries
      for (int64_t b = 0; b <= strip_slots / bs; ++b)
        F.line(col_x(b * bs), ky - 8, col_x(b * bs), vy + strip_h + 8, th.text, 2);
    // The stride-0 broadcast: K/V head j to its r query heads.
    const float sx = col_x(strip_slots) + 8;
    for (int64_t q = 0; q < r; ++q) {
      const int64_t head = j * r + q;
      const float qy = by + static_cast<float>(q) * q_pitch + 2;
      F.line(sx, ky + strip_h + 3, qx - 4, qy + (q_pitch - 4) / 2, group_colour(j), 2.5f);
      F.box({qx, qy, kQW, q_pitch - 4}, group_colour(j));
      if (q_labels)
        F.text(qx + kQW / 2, qy + (q_pitch - 4) / 2, "q" + std::to_string(head), kLabel, fig::rgb(0x111111),
               fig::Anchor::Middle, true, "label");
    }
  }

  // Row 3: alpha of the call's last row, one block per layer, per query head, over the slots;
  // the trained model's induction target outlined in each.
  const float ay = top + static_cast<float>(G) * band + 20;
  const float label_row = 36, layer_gap = 12;
  const float block = (V.bottom() - ay - label_row - layer_gap * static_cast<float>(L - 1)) / static_cast<float>(L);
  const float rh = std::min(40.0f, block / static_cast<float>(h));
  const int64_t copy_slot = f.copy_source >= 0 ? slot_of(f, f.copy_source) : -1;
  float ly = ay;
  for (int64_t l = 0; l < L; ++l) {
    const Tensor& al = f.alpha[static_cast<size_t>(l)];  // (h, t')
    const float by = ay + static_cast<float>(l) * (rh * static_cast<float>(h) + layer_gap);
    fig::Heatmap am;
    am.rect = {x0, by, static_cast<float>(al.size(1)) * cell, rh * static_cast<float>(h)};
    am.rows = h;
    am.cols = al.size(1);
    am.values = al.contiguous().to_vector();
    am.map = fig::ColorMapId::Viridis;
    am.lo = 0;
    am.hi = alpha_max;
    am.gap = th.gap;
    if (am.cols > 0) F.heatmap(am);
    for (int64_t i = 0; i < h; ++i)
      F.box({x0 - 18, by + static_cast<float>(i) * rh + 1, 12, std::max(rh - 2, 1.0f)}, group_colour(i / r));
    const std::string name = (lang == lessons::Lang::Ko ? "층 " : "layer ") + std::to_string(l);
    if (rh * static_cast<float>(h) >= kLabel * 1.2f)
      F.text(V.x, by + rh * static_cast<float>(h) / 2, name, kLabel, th.text, fig::Anchor::Start, false, "label");
    if (copy_slot >= 0 && copy_slot < am.cols)
      F.box({col_x(copy_slot) - 2, by - 2, cell + 4, rh * static_cast<float>(h) + 4}, {0, 0, 0, 0}, th.accent, 4.0f);
    ly = by + rh * static_cast<float>(h);
  }
  // which position each slot holds (differs from the slot once a window rolls)
  ly += label_row / 2 + 2;
  const int64_t n = f.alpha[0].size(1);
  float last_right = -1e9f;
  for (int64_t t = 0; t < n && t < static_cast<int64_t>(f.slot_positions.size()); ++t) {
    const std::string p = std::to_string(f.slot_positions[static_cast<size_t>(t)]);
    const float cx = col_x(t) + cell / 2;
    const float w = fig::text_width(p, kLabel);
    if (cx - w / 2 < last_right + 6) continue;
    F.text(cx, ly, p, kLabel, th.muted, fig::Anchor::Middle, false, "label");
    last_right = cx + w / 2;
  }
  DecodeSlide out;
  if (plot) {
    const float px = qx + kQW + kPlotGap;
    out.plot = fig::add_line_plot(F, th, {px, top, V.right() - px, V.bottom() - top}, by_position_plot(run, f.tokens.size(), lang));
  }
  out.figure = std::move(F);
  return out;
}

Deck decode_deck(const Scenario& scenario, lessons::Lang lang, const std::string& theme, const std::string& model_dir) {
  const DecodeRun run = run_decode(scenario, "", model_dir);
  Deck d;
  d.title = lang == lessons::Lang::Ko ? scenario.title_ko : scenario.title_en;
  if (d.title.empty()) d.title = scenario.name;
  d.pages.push_back({"00-title", d.title,
                     title_slide(d.title, lang == lessons::Lang::Ko ? scenario.summary_ko : scenario.summary_en,
                                 "attnsim · " + scenario.name + " · " + std::to_string(run.frames.size()) +
                                     T(lang, "번의 디코딩 호출", " decode calls"),
                                 theme)});
  for (size_t i = 0; i < run.frames.size(); ++i) {
    char name[48];
    if (i == 0)
      std::snprintf(name, sizeof name, "01-prefill");
    else
      std::snprintf(name, sizeof name, "%02zu-step-%zu", i + 1, i);
    figure::Figure f = decode_slide(scenario, run, i, lang, theme).figure;
    const std::string title = f.title;
    d.pages.push_back({name, title, std::move(f)});
  }
  return d;
}

}  // namespace attnsim::app
