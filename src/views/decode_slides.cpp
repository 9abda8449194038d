// Decode scenarios as slides. See decode_slides.h.
#include "views/decode_slides.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>

#include "views/decode_figure.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "figure/palette.h"
#include "figure/slide.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

namespace {

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
      tables += (s ? ", " : "") + std::string(in_lang(lang, "시퀀스 ", "seq ")) + std::to_string(s) + " " +
                bracket_list(f.tables[s].blocks);
    return std::string(in_lang(lang, "블록 테이블: ", "Block tables: ")) + tables + in_lang(lang, "; 빈 블록 ", "; free ") +
           bracket_list(f.free_list) + in_lang(lang, ". 캐시 사용 ", ". Cache used ") + used + ".";
  }
  std::string what;
  if (run.config.policy.kind != PolicyKind::Full)
    what = std::string(in_lang(lang, "정책 ", "Policy ")) + run.config.policy.text() + ": " + std::to_string(run.slots) +
           in_lang(lang, "칸이 위치 ", " slots hold positions ") + ranges_text(f.slot_positions) + in_lang(lang, "를 담는다", "");
  else if (g == a.heads)
    what = in_lang(lang, "질의 헤드마다 자기 K/V 헤드 (MHA)", "Every query head has its own K/V head (MHA)");
  else
    what = std::string(in_lang(lang, "K/V 헤드 하나가 stride 0 뷰로 질의 헤드 ", "Each K/V head feeds ")) +
           std::to_string(r) + in_lang(lang, "개를 먹인다 (복사 없음)", " query heads through a stride-0 view (no copy)");
  return what + in_lang(lang, ". 캐시 사용 ", ". Cache used ") + used + " (" + std::to_string(run.config.layers) +
         in_lang(lang, "층, K와 V).", " layers, K and V).");
}

}  // namespace

DecodeSlide decode_slide(const Scenario& scenario, const DecodeRun& run, size_t frame, lessons::Lang lang,
                         const std::string& theme, const std::string& title, const std::string& caption, float flight) {
  if (frame >= run.frames.size())
    throw Error("decode call " + std::to_string(frame) + " is outside 0.." +
                std::to_string(static_cast<int64_t>(run.frames.size()) - 1));
  const DecodeFrame& f = run.frames[frame];
  DecodeFigureSpec view;
  view.run = &run;
  view.frame = frame;
  view.cache_layer = default_cache_layer(run);
  for (int64_t l = 0; l < run.config.layers; ++l) view.alpha_layers.push_back(l);
  view.flight = flight;
  view.lang = lang;

  fig::SlideSpec spec;
  spec.title = title.empty() ? title_of(run, f, frame, lang) : title;
  spec.caption = caption.empty() ? caption_of(run, f, lang) : caption;
  const std::string cl = std::to_string(view.cache_layer);
  spec.footer = "attnsim · " + scenario.name + " · " + in_lang(lang, "디코딩 호출 ", "decode call ") +
                std::to_string(frame) + " / " + std::to_string(run.frames.size() - 1) + " · " +
                (lang == lessons::Lang::Ko ? "층 " + cl + "의 K/V 캐시, 모든 층의 alpha"
                                           : "layer " + cl + "'s K/V cache, every layer's alpha");
  spec.legend.map = fig::ColorMapId::Viridis;
  spec.legend.lo = 0;
  spec.legend.hi = alpha_scale(f, view.alpha_layers);
  spec.legend.what = in_lang(lang, "alpha: 이번 호출의 마지막 행", "alpha: this call's last row");
  const fig::Theme& th = fig::theme_by_name(theme);
  fig::Slide s = fig::make_slide(spec, th);
  const DecodeLayout layout = add_decode_view(s.figure, th, s.visual, view);
  s.figure.kind = "decode";
  return {std::move(s.figure), layout.plot};
}

Deck decode_deck(const Scenario& scenario, lessons::Lang lang, const std::string& theme, const std::string& model_dir) {
  const DecodeRun run = run_decode(scenario, "", model_dir);
  Deck d;
  d.title = lang == lessons::Lang::Ko ? scenario.title_ko : scenario.title_en;
  if (d.title.empty()) d.title = scenario.name;
  d.pages.push_back({"00-title", d.title,
                     title_slide(d.title, lang == lessons::Lang::Ko ? scenario.summary_ko : scenario.summary_en,
                                 "attnsim · " + scenario.name + " · " + std::to_string(run.frames.size()) +
                                     in_lang(lang, "번의 디코딩 호출", " decode calls"),
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

namespace {

// A call number given on the command line: a whole number of the run's calls.
size_t call_number(const std::string& text, const char* option, size_t calls) {
  size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || n < 0 || static_cast<unsigned long long>(n) >= calls)
    throw Error(std::string(option) + " '" + text + "' is not a decode call of this scenario (0.." +
                std::to_string(calls - 1) + ")");
  return static_cast<size_t>(n);
}

}  // namespace

Animation decode_animation(const Scenario& scenario, const AnimationSpec& spec, const std::string& model_dir) {
  if (!scenario.decode.enabled) throw Error("--panel decode needs a decode scenario; '" + scenario.name + "' is not one");
  const DecodeRun run = run_decode(scenario, "", model_dir);
  const size_t calls = run.frames.size();
  const size_t from = spec.from.empty() ? 0 : call_number(spec.from, "--from", calls);
  const size_t to = spec.to.empty() ? calls - 1 : call_number(spec.to, "--to", calls);
  if (from >= to)
    throw Error("--from " + std::to_string(from) + " is not before --to " + std::to_string(to) +
                ": an animation runs from an earlier call to a later one");
  Animation out;
  auto add = [&](size_t call, float flight, int delay_cs) {
    out.frames.push_back(decode_slide(scenario, run, call, spec.lang, spec.theme, "", "", flight).figure);
    out.delay_cs.push_back(delay_cs);
  };
  if (spec.reduced_motion) {
    for (size_t call : {from, (from + to) / 2, to}) add(call, 1.0f, 150);
    return out;
  }
  const int moves = static_cast<int>(to - from);
  const int per = frames_per_move(moves, spec.fps, spec.seconds);
  const int delay = std::max(2, static_cast<int>(std::lround(100.0 / std::max(1, spec.fps))));
  add(from, 1.0f, 60);
  for (size_t call = from + 1; call <= to; ++call)
    for (int i = 1; i <= per; ++i) add(call, static_cast<float>(i) / static_cast<float>(per), i == per ? 60 : delay);
  out.delay_cs.back() = 200;
  return out;
}

}  // namespace attnsim::app
