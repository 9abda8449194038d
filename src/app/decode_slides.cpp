// Decode scenarios as slides. See decode_slides.h.
#include "app/decode_slides.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/cost.h"
#include "engine/error.h"
#include "figure/palette.h"
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

// A token as one visible character ("·" for the space).
std::string token_text(int64_t token) {
  const char c = static_cast<char>(kVocabFirst + token);
  return c == ' ' ? "·" : std::string(1, c);
}

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string title_of(const DecodeFrame& f, size_t frame, lessons::Lang lang) {
  const bool ko = lang == lessons::Lang::Ko;
  if (frame == 0)
    return ko ? "프리필: 프롬프트 토큰 " + std::to_string(f.rows) + "개를 한 번에 캐시로"
              : "Prefill: " + std::to_string(f.rows) + " prompt tokens into the cache at once";
  const std::string tok = token_text(f.tokens[static_cast<size_t>(f.first_position)]);
  const std::string pos = std::to_string(f.first_position), n = std::to_string(frame);
  if (ko) return "걸음 " + n + ": 위치 " + pos + "의 '" + tok + "'" + (f.generated ? " (생성)" : " (프롬프트)");
  return "Step " + n + ": '" + tok + "' at position " + pos + (f.generated ? " (generated)" : " (prompt)");
}

std::string caption_of(const DecodeRun& run, const DecodeFrame& f, lessons::Lang lang) {
  const MhaConfig& a = run.config.attn;
  const int64_t g = a.kv_group_count(), r = a.heads / g;
  const std::string used = human_bytes(f.used_bytes) + " / " + human_bytes(run.storage_bytes);
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
           T(lang, "칸이 위치 ", " slots hold positions ") + list_text(f.slot_positions) + T(lang, "를 담는다", "");
  else if (g == a.heads)
    what = T(lang, "질의 헤드마다 자기 K/V 헤드 (MHA)", "Every query head has its own K/V head (MHA)");
  else
    what = std::string(T(lang, "K/V 헤드 하나가 stride 0 뷰로 질의 헤드 ", "Each K/V head feeds ")) +
           std::to_string(r) + T(lang, "개를 먹인다 (복사 없음)", " query heads through a stride-0 view (no copy)");
  return what + T(lang, ". 캐시 사용 ", ". Cache used ") + used + " (" + std::to_string(run.config.layers) +
         T(lang, "층, K와 V).", " layers, K and V).");
}

}  // namespace

figure::Figure decode_slide(const Scenario& scenario, const DecodeRun& run, size_t frame, lessons::Lang lang,
                            const std::string& theme) {
  if (frame >= run.frames.size())
    throw Error("decode call " + std::to_string(frame) + " is outside 0.." +
                std::to_string(static_cast<int64_t>(run.frames.size()) - 1));
  const DecodeFrame& f = run.frames[frame];
  const fig::Theme& th = fig::theme_by_name(theme);
  const MhaConfig& a = run.config.attn;
  const int64_t h = a.heads, G = a.kv_group_count(), r = h / G, dk = a.head_dim();
  const bool paged = run.config.block_size > 0;
  const int64_t bs = run.config.block_size;
  const Tensor& k = f.k_cache[0];  // (g, t', dk), layer 0
  const Tensor& al = f.alpha[0];   // (h, t')
  const int64_t filled = k.size(1);
  // The slots a strip shows: contiguous, every preallocated slot; paged, sequence 0's blocks.
  const int64_t strip_slots = paged ? (filled + bs - 1) / bs * bs : run.slots;

  float alpha_max = 1e-6f, k_max = 1e-6f;
  for (float v : al.to_vector()) alpha_max = std::max(alpha_max, v);
  for (float v : k.to_vector()) k_max = std::max(k_max, std::fabs(v));

  fig::SlideSpec spec;
  spec.title = title_of(f, frame, lang);
  spec.caption = caption_of(run, f, lang);
  spec.footer = "attnsim · " + scenario.name + " · " + T(lang, "디코딩 호출 ", "decode call ") +
                std::to_string(frame) + " / " + std::to_string(run.frames.size() - 1) + " · " +
                T(lang, "층 0의 K 캐시", "layer 0's K cache");
  spec.legend.map = fig::ColorMapId::Viridis;
  spec.legend.lo = 0;
  spec.legend.hi = alpha_max;
  spec.legend.what = T(lang, "alpha: 이번 호출의 마지막 행", "alpha: this call's last row");
  fig::Slide s = fig::make_slide(spec, th);
  fig::Figure& F = s.figure;
  const fig::Rect V = s.visual;

  constexpr float kLabelW = 110, kQW = 80, kQPitch = 36, kLabel = fig::kLabelMin;
  const int64_t columns = std::max<int64_t>(run.config.t_max + 1, strip_slots);
  const float cell = std::min(64.0f, (V.w - kLabelW - kQW - 120) / static_cast<float>(columns));
  const float x0 = V.x + kLabelW;
  auto col_x = [&](int64_t c) { return x0 + static_cast<float>(c) * cell; };

  // Row 1: the tokens fed so far (this call's outlined; evicted ones struck through) and the
  // predicted next one.
  const float ty = V.y;
  F.text(V.x, ty + 22, T(lang, "토큰", "tokens"), kLabel, th.muted, fig::Anchor::Start, false, "label");
  const bool evicting = !paged && run.config.policy.kind != PolicyKind::Full;
  for (size_t p = 0; p <= f.tokens.size(); ++p) {
    const int64_t pos = static_cast<int64_t>(p);
    const bool next = p == f.tokens.size(), fresh = !next && pos >= f.first_position;
    const bool kept = next || !evicting ||
                      std::find(f.slot_positions.begin(), f.slot_positions.end(), pos) != f.slot_positions.end();
    const fig::Rect c{col_x(pos) + 2, ty, cell - 4, 44};
    if (next)
      F.box(c, {0, 0, 0, 0}, th.muted, 1.5f);
    else
      F.box(c, th.gap, fresh ? th.accent : th.frame, fresh ? 4.0f : 1.0f);
    if (cell >= 24)
      F.text(c.x + c.w / 2, ty + 22, token_text(next ? f.next : f.tokens[p]), kLabel, kept ? th.text : th.muted,
             fig::Anchor::Middle, false, "label");
    if (!kept) F.line(c.x, c.bottom(), c.right(), c.y, th.muted, 3);
  }

  // Row 2: the K strips (one per K/V head; slots across, d_k down) and the query heads they
  // feed; group j's band holds its r query heads.
  const float top = ty + 44 + 24, band = static_cast<float>(r) * kQPitch;
  const float strip_h = std::min(120.0f, band - 8);
  const float qx = V.right() - kQW;
  for (int64_t j = 0; j < G; ++j) {
    const float by = top + static_cast<float>(j) * band, sy = by + (band - strip_h) / 2;
    F.box({V.x, sy + strip_h / 2 - 14, 14, 28}, group_colour(j));
    F.text(V.x + 22, sy + strip_h / 2, "K" + std::to_string(j), kLabel, th.text, fig::Anchor::Start, false, "label");
    fig::Heatmap hm;
    hm.rect = {x0, sy, static_cast<float>(filled) * cell, strip_h};
    hm.rows = dk;
    hm.cols = filled;
    for (int64_t e = 0; e < dk; ++e)
      for (int64_t t = 0; t < filled; ++t) hm.values.push_back(k.at({j, t, e}));
    hm.map = fig::ColorMapId::Diverging;
    hm.lo = -k_max;
    hm.hi = k_max;
    hm.gap = th.gap;
    if (filled > 0) F.heatmap(hm);
    for (int64_t t = filled; t < strip_slots; ++t)  // preallocated, still empty
      F.box({col_x(t) + 1, sy + 1, cell - 2, strip_h - 2}, {0, 0, 0, 0}, th.frame, 1.0f);
    for (int64_t t : f.append_slots)  // what this call wrote
      if (t >= 0 && t < strip_slots) F.box({col_x(t), sy - 3, cell, strip_h + 6}, {0, 0, 0, 0}, th.accent, 4.0f);
    if (paged)  // block boundaries
      for (int64_t b = 0; b <= strip_slots / bs; ++b)
        F.line(col_x(b * bs), sy - 8, col_x(b * bs), sy + strip_h + 8, th.text, 2);
    // The stride-0 broadcast: K head j to its r query heads.
    const float sx = col_x(strip_slots) + 8;
    for (int64_t q = 0; q < r; ++q) {
      const int64_t head = j * r + q;
      const float qy = by + static_cast<float>(q) * kQPitch + 2;
      F.line(sx, sy + strip_h / 2, qx - 4, qy + (kQPitch - 4) / 2, group_colour(j), 2.5f);
      F.box({qx, qy, kQW, kQPitch - 4}, group_colour(j));
      F.text(qx + kQW / 2, qy + (kQPitch - 4) / 2, "q" + std::to_string(head), kLabel, fig::rgb(0x111111),
             fig::Anchor::Middle, true, "label");
    }
  }

  // Row 3: alpha of the call's last row, per query head, over the slots it weighs.
  const float ay = top + static_cast<float>(G) * band + 24;
  const float label_row = 36;
  const float rh = std::min(40.0f, (V.bottom() - ay - label_row) / static_cast<float>(h));
  fig::Heatmap am;
  am.rect = {x0, ay, static_cast<float>(al.size(1)) * cell, rh * static_cast<float>(h)};
  am.rows = h;
  am.cols = al.size(1);
  am.values = al.contiguous().to_vector();
  am.map = fig::ColorMapId::Viridis;
  am.lo = 0;
  am.hi = alpha_max;
  am.gap = th.gap;
  if (am.cols > 0) F.heatmap(am);
  const bool row_labels = rh >= kLabel * 1.2f;
  for (int64_t i = 0; i < h; ++i) {
    const float ry = ay + static_cast<float>(i) * rh;
    F.box({x0 - 18, ry + 2, 12, rh - 4}, group_colour(i / r));
    if (row_labels && (i == 0 || i == h - 1 || rh >= kLabel * 1.25f))
      F.text(x0 - 26, ry + rh / 2, "q" + std::to_string(i), kLabel, th.text, fig::Anchor::End, false, "label");
  }
  // which position each slot holds (differs from the slot once a window rolls)
  const float ly = ay + rh * static_cast<float>(h) + label_row / 2 + 2;
  float last_right = -1e9f;
  for (int64_t t = 0; t < am.cols && t < static_cast<int64_t>(f.slot_positions.size()); ++t) {
    const std::string p = std::to_string(f.slot_positions[static_cast<size_t>(t)]);
    const float cx = col_x(t) + cell / 2;
    const float w = fig::text_width(p, kLabel);
    if (cx - w / 2 < last_right + 6) continue;
    F.text(cx, ly, p, kLabel, th.muted, fig::Anchor::Middle, false, "label");
    last_right = cx + w / 2;
  }
  return F;
}

Deck decode_deck(const Scenario& scenario, lessons::Lang lang, const std::string& theme) {
  const DecodeRun run = run_decode(scenario);
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
    figure::Figure f = decode_slide(scenario, run, i, lang, theme);
    const std::string title = f.title;
    d.pages.push_back({name, title, std::move(f)});
  }
  return d;
}

}  // namespace attnsim::app
