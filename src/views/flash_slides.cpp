// FlashAttention slides and animation. See flash_slides.h.
#include "views/flash_slides.h"

#include <algorithm>
#include <cmath>

#include "views/flash_view.h"
#include "engine/error.h"
#include "engine/mha.h"
#include "figure/palette.h"
#include "figure/slide.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

int64_t flash_slide_block(int64_t t) { return std::max<int64_t>(1, (t + 3) / 4); }

FlashCoreResult flash_tile_trace(const RunData& d, int64_t batch, int64_t head, int64_t block_q, int64_t block_k) {
  const Step* q = d.run.trace.find("q_heads");
  // GQA / MQA runs: the query heads read K and V through the stride-0 grouped views.
  const Step* k = d.run.trace.find("k_grouped");
  const Step* v = d.run.trace.find("v_grouped");
  if (!k || k->skipped()) k = d.run.trace.find("k_heads");
  if (!v || v->skipped()) v = d.run.trace.find("v_heads");
  if (!q || !k || !v || !q->out.defined() || !k->out.defined() || !v->out.defined())
    throw Error("no q_heads / k_heads / v_heads in this run");
  if (batch < 0 || batch >= q->out.shape()[0])
    throw Error("batch " + std::to_string(batch) + " is outside 0.." + std::to_string(q->out.shape()[0] - 1));
  if (head < 0 || head >= q->out.shape()[1])
    throw Error("head " + std::to_string(head) + " is outside 0.." + std::to_string(q->out.shape()[1] - 1));
  FlashOptions o;
  o.block_q = block_q;
  o.block_k = block_k;
  o.record_tiles = true;
  o.trace_batch = batch;
  o.trace_head = head;
  o.threads = 1;
  // The tiled path runs the correct math (flash.h); only the missing 1/sqrt(dk) is a bug it
  // can show: the run's own scale rule (mha.h attention_scale).
  return flash_attention_core(q->out, k->out, v->out, FlashMask::from_spec(d.config.mask), attention_scale(d.config),
                              o);
}

fig::FlashWords flash_words(lessons::Lang lang) {
  fig::FlashWords w;
  if (lang != lessons::Lang::Ko) return w;
  w.query_block = "질의 블록";
  w.tile = "타일";
  w.event = "단계";
  w.row = "행";
  w.max_m = "최댓값 m";
  w.sum_l = "합 l";
  w.rescale = "재조정";
  w.final_division = "마지막 나눗셈: out = O / l";
  w.skipped = "건너뜀: 모든 점수가 가려져 아무것도 읽지 않는다";
  w.skip = "건너뜀";
  w.more_rows = "행 더";
  w.fast_now = "이 타일의 빠른 메모리";
  w.traffic = "지금까지 느린 메모리 이동";
  w.tiled = "타일";
  w.standard = "표준";
  w.elements = "원소";
  w.query_tokens = "질의 토큰";
  w.key_tokens = "키 토큰";
  w.grid_caption = "S = Q·K^T·scale, 타일 하나씩";
  return w;
}

namespace {

// The events of (batch, head) only (the trace was recorded for that pair already).
const std::vector<FlashEvent>& events_of(const FlashCoreResult& core) {
  if (core.events.empty()) throw Error("the tiled run recorded no tile events");
  return core.events;
}

}  // namespace

fig::FlashTiles flash_tiles_input(const RunData& run, const FlashCoreResult& core, int64_t batch, int64_t block_q,
                                  int64_t block_k, size_t event) {
  fig::FlashTiles in;
  in.events = &events_of(core);
  in.tq = run.config.tq;
  in.tk = run.config.tk;
  in.block_q = block_q;
  in.block_k = block_k;
  in.event = event;
  if (batch >= 0 && batch < static_cast<int64_t>(run.q_tokens.size()))
    in.q_tokens = run.q_tokens[static_cast<size_t>(batch)];
  if (batch >= 0 && batch < static_cast<int64_t>(run.k_tokens.size()))
    in.k_tokens = run.k_tokens[static_cast<size_t>(batch)];
  return in;
}

figure::Figure flash_slide(const Scenario& scenario, const RunData& run, const FlashCoreResult& core, int64_t block_q,
                           int64_t block_k, size_t event, const SlideView& view) {
  const auto& ev = events_of(core);
  const int64_t batch = view.batch < 0 ? scenario.focus_batch : view.batch;
  const fig::Theme& th = fig::theme_by_name(view.theme);
  const lessons::Lang lang = view.lang;
  const fig::FlashTiles in = flash_tiles_input(run, core, batch, block_q, block_k, event);

  fig::SlideSpec spec;
  const std::string head = std::to_string(ev.front().h);
  spec.title = !view.title.empty() ? view.title
                                   : std::string("FlashAttention · ") + head_word(lang) + head + " · Br " +
                                         std::to_string(block_q) + " × Bc " + std::to_string(block_k);
  const std::string bug_caption = flash_bug_caption(run.config, lang);
  spec.caption = !view.caption.empty()  ? view.caption
                 : !bug_caption.empty() ? bug_caption
                                        : in_lang(lang, "타일마다 행의 최댓값 m과 합 l을 고쳐 간다. (Tq, Tk) 행렬 전체는 어디에도 저장되지 않는다.",
                         "Each tile updates every row's running max m and sum l; the whole (Tq, Tk) matrix is never "
                         "stored.");
  const std::string scen_title = lang == lessons::Lang::Ko ? scenario.title_ko : scenario.title_en;
  spec.footer = "attnsim · " + scenario.name + (scen_title.empty() ? "" : " (" + scen_title + ")") + " · flash · " +
                in_lang(lang, "배치 ", "batch ") + std::to_string(batch) + " · " + head_word(lang) + head;
  spec.legend = fig::flash_legend(in, in_lang(lang, "점수 S · PuOr (부호 있음)", "scores S · PuOr (signed)"));
  fig::Slide s = fig::make_slide(spec, th);
  fig::add_flash_tiles(s.figure, th, s.visual, in, flash_words(lang));
  s.figure.kind = "flash";
  return s.figure;
}

figure::Figure flash_step_slide(const Scenario& scenario, const RunData& run, const SlideView& view) {
  const int64_t batch = view.batch < 0 ? scenario.focus_batch : view.batch;
  const int64_t bq = flash_slide_block(run.config.tq), bk = flash_slide_block(run.config.tk);
  const FlashCoreResult core = flash_tile_trace(run, batch, std::max<int64_t>(0, view.head), bq, bk);
  size_t event = core.events.size() - 1;
  if (view.tile_q >= 0 && view.tile_k >= 0) {
    const size_t at = fig::flash_event_of_tile(core.events, view.tile_q, view.tile_k);
    if (at < core.events.size()) event = at;
  }
  return flash_slide(scenario, run, core, bq, bk, event, view);
}

Animation flash_animation(const Scenario& scenario, const RunData& run, const AnimationSpec& spec) {
  const int64_t batch = spec.batch < 0 ? scenario.focus_batch : spec.batch;
  const int64_t bq = flash_slide_block(run.config.tq), bk = flash_slide_block(run.config.tk);
  const FlashCoreResult core = flash_tile_trace(run, batch, 0, bq, bk);
  const size_t n = events_of(core).size();
  SlideView v;
  v.batch = batch;
  v.lang = spec.lang;
  v.theme = spec.theme;
  std::vector<size_t> shown;
  if (spec.reduced_motion) {
    shown = {0, n / 2, n - 1};
  } else {
    for (size_t i = 0; i < n; ++i) shown.push_back(i);
  }
  const int per = std::max(30, static_cast<int>(std::lround(spec.seconds * 100.0 / static_cast<double>(shown.size()))));
  Animation out;
  for (size_t i : shown) {
    out.frames.push_back(flash_slide(scenario, run, core, bq, bk, i, v));
    out.delay_cs.push_back(spec.reduced_motion ? 150 : per);
  }
  out.delay_cs.back() = 200;
  return out;
}

}  // namespace attnsim::app
