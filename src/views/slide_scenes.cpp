// Slides of the simulator's views. See slide_scenes.h.
//
// Index
//   [SECTION] the run
//   [SECTION] captions
//   [SECTION] one slide
//   [SECTION] decks
#include "views/slide_scenes.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "views/cost_slides.h"
#include "views/decode_slides.h"
#include "views/flash_slides.h"
#include "views/memory_slides.h"
#include "views/experiment_figure.h"
#include "views/lens_figure.h"
#include "views/model_slides.h"
#include "views/model_view.h"
#include "views/overview_figure.h"
#include "views/sampling_figure.h"
#include "lessons/step_marks.h"
#include "lessons/model_quantity.h"
#include "lessons/whole_quantity.h"
#include "engine/error.h"
#include "engine/scenario.h"
#include "engine/trace.h"
#include "figure/palette.h"
#include "figure/slide.h"
#include "figure/tensor_figure.h"
#include "lessons/markup.h"
#include "lessons/quantity.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

// [SECTION] the run ------------------------------------------------------------------------

std::shared_ptr<const RunData> compute_run(const Scenario& s) {
  auto data = std::make_shared<RunData>();
  data->config = s.config;
  const MhaInputs inputs = scenario_inputs(s.config, s.sentences, s.key_sentences, s.input_scale);
  // kv_dim: GQA/MQA scenarios (decode-gqa, ...) project keys and values to g·d_k columns.
  data->run = forward(s.config, init_weights(s.config.d_model, s.config.bias, s.config.seed, s.config.kv_dim()),
                      inputs);
  if (s.has_reference) {
    const MhaInputs ref_inputs = scenario_inputs(s.reference, s.sentences, s.key_sentences, s.input_scale);
    data->reference = forward(
        s.reference, init_weights(s.reference.d_model, s.reference.bias, s.reference.seed, s.reference.kv_dim()),
        ref_inputs);
    data->has_reference = true;
  }
  data->q_tokens = batch_tokens(s.sentences, s.config.batch, s.config.tq);
  data->k_tokens = batch_tokens(s.key_sentences.empty() || s.config.self_attention ? s.sentences : s.key_sentences,
                                s.config.batch, s.config.tk);
  return data;
}

// [SECTION] captions -----------------------------------------------------------------------

std::string step_caption(const std::string& step, lessons::Lang lang) {
  struct Two {
    const char *en, *ko;
  };
  static const std::map<std::string, Two> k = {
      {"query", {"The query tokens as vectors: one row per token, d_model numbers each.",
                 "질의 토큰을 벡터로: 토큰마다 한 행, 행마다 d_model개의 수."}},
      {"key", {"The key tokens as vectors; in self-attention they are the query tokens.",
               "키 토큰의 벡터. 셀프 어텐션에서는 질의와 같은 텐서다."}},
      {"value", {"The value tokens as vectors: what the attention will mix.",
                 "값 토큰의 벡터: 어텐션이 섞게 될 내용."}},
      {"q_proj", {"W_Q turns every token into a query of the same width d_model.",
                  "W_Q가 각 토큰을 같은 폭 d_model의 질의로 바꾼다."}},
      {"k_proj", {"W_K turns every token into a key.", "W_K가 각 토큰을 키로 바꾼다."}},
      {"v_proj", {"W_V turns every token into a value.", "W_V가 각 토큰을 값으로 바꾼다."}},
      {"q_view", {"view cuts d_model into h heads of dk numbers without copying anything.",
                  "view는 아무것도 복사하지 않고 d_model을 dk개씩 h개의 헤드로 나눈다."}},
      {"k_view", {"The keys cut into heads: the same memory, a new shape.",
                  "키를 헤드로 나눈 모양: 같은 메모리, 새 모양."}},
      {"v_view", {"The values cut into heads: the same memory, a new shape.",
                  "값을 헤드로 나눈 모양: 같은 메모리, 새 모양."}},
      {"q_heads", {"transpose puts the head axis first: each head gets its own T x dk block, still no copy.",
                   "transpose가 헤드 축을 앞으로 옮긴다: 헤드마다 T x dk 블록, 여전히 복사 없음."}},
      {"k_heads", {"Each head's keys as one block, read through new strides.",
                   "헤드별 키 블록: 새 stride로 같은 메모리를 읽는다."}},
      {"v_heads", {"Each head's values as one block, read through new strides.",
                   "헤드별 값 블록: 새 stride로 같은 메모리를 읽는다."}},
      {"q_rot", {"RoPE turns each pair of a query's dimensions by an angle that grows with its position.",
                 "RoPE는 질의의 차원 쌍마다 위치에 따라 커지는 각도만큼 돌린다."}},
      {"k_rot", {"The keys are turned the same way: in q·k only the distance between two positions is left of it.",
                 "키도 같은 방식으로 돌린다: q·k에는 두 위치 사이의 거리만큼의 회전만 남는다."}},
      {"k_grouped", {"Each key head serves its group of query heads through a stride-0 view: no copy.",
                     "키 헤드 하나가 stride 0인 view로 자기 그룹의 질의 헤드들에 쓰인다: 복사 없음."}},
      {"v_grouped", {"Each value head serves its group of query heads the same way.",
                     "값 헤드도 같은 방식으로 자기 그룹의 질의 헤드들에 쓰인다."}},
      {"scores", {"Every query meets every key: one dot product per cell, per head.",
                  "모든 질의가 모든 키와 만난다: 헤드마다 칸 하나에 내적 하나."}},
      {"scores_scaled", {"Dividing by the square root of dk keeps the scores in a range softmax can use.",
                         "dk의 제곱근으로 나누어 softmax가 다룰 수 있는 범위로 맞춘다."}},
      {"mask", {"The mask marks the pairs a query may not look at (dark = hidden).",
                "마스크는 질의가 보면 안 되는 쌍을 표시한다 (어두운 칸 = 가림)."}},
      {"scores_masked", {"Hidden pairs become -inf, so softmax gives them exactly zero weight.",
                         "가려진 쌍은 -inf가 되어 softmax에서 가중치가 정확히 0이 된다."}},
      {"alpha", {"softmax turns each row into weights that add up to 1.",
                 "softmax가 각 행을 합이 1인 가중치로 바꾼다."}},
      {"alpha_dropped", {"Dropout zeroes some weights in training and scales the rest up.",
                         "드롭아웃은 학습 중 일부 가중치를 0으로 만들고 나머지를 키운다."}},
      {"ctx_heads", {"Each head mixes the value rows with its weights: one T x dk result per head.",
                     "각 헤드가 가중치로 값 행을 섞는다: 헤드마다 T x dk 결과."}},
      {"ctx_transposed", {"transpose brings the tokens back to the front: a view, not contiguous.",
                          "transpose로 토큰 축을 다시 앞으로: view이며 연속이 아니다."}},
      {"ctx_contiguous", {"contiguous copies the numbers into token order so that view can follow.",
                          "contiguous가 수를 토큰 순서로 복사해야 view를 쓸 수 있다."}},
      {"ctx_concat", {"The heads side by side again: d_model numbers per token.",
                      "헤드를 다시 나란히 붙인다: 토큰마다 d_model개의 수."}},
      {"out", {"W_O mixes the heads into the output, one row per token.",
               "W_O가 헤드들을 섞어 출력을 만든다: 토큰마다 한 행."}},
  };
  auto it = k.find(step);
  if (it == k.end()) return step;
  return lang == lessons::Lang::Ko ? it->second.ko : it->second.en;
}

namespace {

std::string shape_text(const Dims& d) {
  std::string s = "(";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + ")";
}

}  // namespace

fig::AxisLabels step_axis_labels(const RunData& run, const std::string& step, const Tensor& t, int64_t batch,
                                 lessons::Lang lang) {
  fig::AxisLabels l;
  const bool keys_down = step == "key" || step == "value" || step == "k_proj" || step == "v_proj" ||
                         step == "k_view" || step == "v_view" || step == "k_heads" || step == "v_heads" ||
                         step == "k_rot";
  const auto& down = keys_down ? run.k_tokens : run.q_tokens;
  if (batch < static_cast<int64_t>(down.size())) l.rows = down[static_cast<size_t>(batch)];
  l.row_noun = keys_down ? in_lang(lang, "키 토큰", "key tokens") : in_lang(lang, "질의 토큰", "query tokens");
  const bool bands = t.dim() == 4 && fig::is_bands_step(step);  // (B, T, h, dk): one T x d matrix
  const int64_t cols = t.shape().back();
  const bool scores_like = step == "scores" || step == "scores_scaled" || step == "mask" ||
                           step == "scores_masked" || step == "alpha" || step == "alpha_dropped";
  if (scores_like && batch < static_cast<int64_t>(run.k_tokens.size())) {
    l.cols = run.k_tokens[static_cast<size_t>(batch)];
    l.col_noun = in_lang(lang, "키 토큰", "key tokens");
  } else {
    // a band's columns count within its head (j of dk), as the view's last index does
    for (int64_t i = 0; i < (bands ? t.shape()[2] : 1); ++i)
      for (int64_t j = 0; j < cols; ++j) l.cols.push_back(std::to_string(j));
    l.col_noun = in_lang(lang, "특징", "features");
  }
  const Step* s = run.run.trace.find(step);
  const int64_t heads = bands ? t.shape()[2] : run.config.heads;
  if (bands || (s && columns_are_heads(run, *s)))
    for (int64_t i = 0; i < heads; ++i) l.col_groups.push_back(head_word(lang) + std::to_string(i));
  return l;
}

bool columns_are_heads(const RunData& run, const Step& step) {
  if (step.kind == StepKind::Input || !step.out.defined() || step.out.dim() != 3) return false;
  if (step.out.shape().back() != run.config.d_model || run.config.heads < 2) return false;
  return step.name != "out" || run.config.wo_identity;
}

float buglab_difference(float bug, float correct) {
  if (bug == correct || (std::isnan(bug) && std::isnan(correct))) return 0;  // the same inf too
  if (std::isnan(bug) || std::isnan(correct)) return NAN;
  if (std::isinf(bug) || std::isinf(correct)) return bug;
  return bug - correct;
}

std::vector<fig::Block> buglab_blocks(const RunData& run, const std::string& step_name, int64_t batch, int64_t head,
                                      lessons::Lang lang) {
  const Step* step = run.run.trace.find(step_name);
  const Step* ok = run.has_reference ? run.reference.trace.find(step_name) : nullptr;
  if (!step || !ok || step->skipped() || ok->skipped() || !step->out.defined() || !ok->out.defined()) return {};
  const auto correct = fig::tensor_blocks(step_name, ok->out, batch, head_word(lang));
  const auto buggy = fig::tensor_blocks(step_name, step->out, batch, head_word(lang));
  // one block per head, or one matrix for every head (a (B, T, d) or (B, T, h, dk) step)
  const size_t h = correct.size() == 1 ? 0 : static_cast<size_t>(std::max<int64_t>(0, head));
  if (h >= correct.size() || h >= buggy.size() || correct[h].values.size() != buggy[h].values.size()) return {};
  fig::Block a = correct[h], b = buggy[h], d = correct[h];
  const std::string head_name = correct.size() > 1 ? std::string(" · ") + head_word(lang) + std::to_string(h) : "";
  a.name = in_lang(lang, "올바른 계산", "correct") + head_name;
  b.name = in_lang(lang, "버그", "with the bug") + head_name;
  d.name = in_lang(lang, "차이 (버그 - 올바름)", "difference (bug - correct)");
  for (size_t i = 0; i < d.values.size(); ++i) d.values[i] = buglab_difference(b.values[i], a.values[i]);
  std::vector<fig::Block> pair{a, b};
  fig::set_common_range(pair);
  std::vector<fig::Block> diff{d};
  for (auto& x : diff) x.map = fig::ColorMapId::Diverging;
  fig::set_common_range(diff);
  return {pair[0], pair[1], diff[0]};
}

// [SECTION] one slide ---------------------------------------------------------------------

figure::Figure step_slide(const Scenario& scenario, const RunData& run, const SlideView& view) {
  if (view.panel == "flash") return flash_step_slide(scenario, run, view);
  if (view.panel == "memory") return memory_slide(scenario, run, view);
  const std::string step_name = view.step.empty() ? scenario.focus_step : view.step;
  const Step* step = run.run.trace.find(step_name);
  if (!step && !is_step_name(step_name)) throw Error("unknown step '" + step_name + "'");
  const int64_t batch = view.batch < 0 ? scenario.focus_batch : view.batch;
  const fig::Theme& th = fig::theme_by_name(view.theme);
  const lessons::Lang lang = view.lang;

  fig::SlideSpec spec;
  const std::string scen_title = lang == lessons::Lang::Ko ? scenario.title_ko : scenario.title_en;
  spec.title = view.title.empty() ? step_name + (step->skipped() ? "" : "  " + shape_text(step->out.shape())) : view.title;
  spec.caption = view.caption.empty() ? step_caption(step_name, lang) : view.caption;
  spec.footer = "attnsim · " + scenario.name + (scen_title.empty() ? "" : " (" + scen_title + ")") + " · " +
                step_name + " · " + in_lang(lang, "배치 ", "batch ") + std::to_string(batch);

  if (!step || step->skipped() || !step->out.defined()) {
    // A step the run never reached (view without contiguous stops the pass) or skipped here.
    spec.has_legend = false;
    if (view.title.empty()) spec.title = step_name;
    fig::Slide s = fig::make_slide(spec, th);
    const std::string why = !step ? std::string(in_lang(lang, "계산이 여기서 멈췄다: ", "The run stopped before this step: ")) + run.run.error
                                  : std::string(in_lang(lang, "이 설정에서는 건너뛴 단계: ", "Skipped in this setting: ")) + step->note;
    const auto lines = fig::wrap_text(why, fig::kBodySize, s.visual.w, static_cast<int>((s.visual.h - 60) / 46));
    for (size_t i = 0; i < lines.size(); ++i)
      s.figure.text(s.visual.x, s.visual.y + 60 + static_cast<float>(i) * 46, lines[i], fig::kBodySize, th.muted,
                    fig::Anchor::Start, false, "note");
    s.figure.kind = "stopped";
    return s.figure;
  }
  if (batch < 0 || batch >= step->out.shape()[0])
    throw Error("batch " + std::to_string(batch) + " is outside 0.." + std::to_string(step->out.shape()[0] - 1));

  std::vector<fig::Block> blocks;
  if (view.panel == "buglab") blocks = buglab_blocks(run, step_name, batch, view.head, lang);
  const bool triptych = !blocks.empty();
  if (blocks.empty()) blocks = fig::tensor_blocks(step_name, step->out, batch, head_word(lang));
  // "scores · PuOr"; the mask's map is named after it: "mask", not "mask · mask"
  const std::string map = fig::colormap_name(blocks.empty() ? fig::ColorMapId::Viridis : blocks.front().map);
  spec.legend = legend_in_lang(fig::legend_for(blocks, map == step_name ? step_name : step_name + " · " + map), lang);
  fig::Slide s = fig::make_slide(spec, th);
  fig::add_blocks(s.figure, th, s.visual, blocks, step_axis_labels(run, step_name, step->out, batch, lang),
                 fig::VAlign::Middle);
  s.figure.kind = triptych ? "buglab" : "tensor";
  return s.figure;
}

figure::Legend legend_in_lang(figure::Legend lg, lessons::Lang lang) {
  if (lg.map == fig::ColorMapId::Mask) {
    lg.lo_text = in_lang(lang, "보임", "shown");
    lg.hi_text = in_lang(lang, "가림", "hidden");
  }
  return lg;
}

figure::Figure title_slide(const std::string& title, const std::string& summary, const std::string& footer,
                           const std::string& theme) {
  const fig::Theme& th = fig::theme_by_name(theme);
  fig::Figure f;
  f.width = fig::kSlideWidth;
  f.height = fig::kSlideHeight;
  f.background = th.background;
  f.theme = th.name;
  f.title = title;
  const float inner = fig::kSlideWidth - 2 * fig::kMargin;
  const auto lines = fig::wrap_text(title, 80, inner, 2, true);
  float y = 380;
  for (const auto& l : lines) {
    f.text(fig::kMargin, y, l, 80, th.text, fig::Anchor::Start, true, "title");
    y += 100;
  }
  f.line(fig::kMargin, y - 20, fig::kMargin + 400, y - 20, th.accent, 6);
  y += 40;
  for (const auto& l : fig::wrap_text(summary, 36, inner, 5)) {
    f.text(fig::kMargin, y, l, 36, th.text, fig::Anchor::Start, false, "caption");
    y += 52;
  }
  fig::fitted_text(f, fig::kMargin, fig::kSlideHeight - fig::kMargin, footer, 28, inner, th.muted, fig::Anchor::Start,
                   false, "footer");
  f.kind = "title";
  return f;
}

// [SECTION] decks ------------------------------------------------------------------------

namespace {

std::string page_name(int n, const std::string& id) {
  char b[160];
  std::snprintf(b, sizeof b, "%02d-%s", n, id.c_str());
  return b;
}

// A model / timeline step's slide: the checkpoint its first model.* claim reads (that run and
// step; the shipped model otherwise) as the head grid with the loss and accuracy bars (the
// induction heads knocked out for action "ablate-induction"), or as its run's training curves;
// a step whose claims read several checkpoints compares them; a step that opens the Overview,
// Sampling or Lens tab, that tab's figure (the page shows what the step's title names).
fig::Figure model_step_slide(const lessons::LessonStep& st, const SlideView& v) {
  const std::vector<std::string> dirs = lessons::step_model_dirs(st);
  std::vector<ModelView> views(dirs.size());
  for (size_t i = 0; i < dirs.size(); ++i) views[i].load(dirs[i]);
  auto name = [](const std::string& dir) { return checkpoint_name(dir); };
  ModelSlideText text;
  text.title = v.title;
  text.caption = v.caption;
  text.lang = v.lang;
  text.theme = v.theme;
  text.footer = "attnsim · " + name(dirs[0]) + " · " + in_lang(v.lang, "단계 ", "step ") + std::to_string(views[0].step());
  if (st.panel == "timeline") return timeline_slide(dirs[0], views[0].step(), text).figure;
  if (dirs.size() > 1 && st.action.empty()) {
    // The step compares checkpoints (lesson 15: one head vs eight): all of them, side by side.
    std::vector<std::pair<std::string, const ModelView*>> models;
    text.footer = "attnsim";
    for (size_t i = 0; i < dirs.size(); ++i) {
      // two checkpoints of one run (steps 1000 and 4000) are told apart by their step
      const bool shared = std::count_if(dirs.begin(), dirs.end(), [&](const std::string& d) { return name(d) == name(dirs[i]); }) > 1;
      models.emplace_back(name(dirs[i]) + (shared ? " · " + std::string(in_lang(v.lang, "단계 ", "step ")) +
                                                        std::to_string(views[i].step())
                                                  : ""),
                          &views[i]);
      text.footer += " · " + name(dirs[i]) + " " + in_lang(v.lang, "단계 ", "step ") + std::to_string(views[i].step());
    }
    return compare_slide(models, text).figure;
  }
  // A step on the Overview, Sampling or Lens tab shows that figure, on the sequence its
  // whole-pass claims read and at the sampling settings of the first claim that samples (the
  // lens: of the first claim on the lens or the attribution, which read one sequence).
  const Lang lang = v.lang == lessons::Lang::Ko ? Lang::Ko : Lang::En;
  const TokenLabel label = views[0].labeller();
  if (st.action == "open-sampling" || st.action == "open-overview" || st.action == "open-lens") {
    const lessons::Claim* first = nullptr;
    for (const lessons::Claim& c : st.claims) {
      const bool samples = c.quantity.rfind("model.sample_", 0) == 0 || c.quantity == "model.loop_share";
      const bool lens = c.quantity.rfind("model.lens_", 0) == 0 || c.quantity.rfind("model.dla_", 0) == 0;
      if (!first && (st.action == "open-lens" ? lens && !c.model.prompts && !c.model.runs : samples)) first = &c;
    }
    const lessons::ModelSettings table = first ? first->model : lessons::ModelSettings{};
    views[0].set_tokens(lessons::whole_sequence(views[0].model(), table));
    views[0].sampling().set_options(lessons::sampling_options(table));
  }
  const lessons::TokenText token_text = lessons::token_text(views[0].tokenizer());
  if (st.action == "open-sampling") {
    const auto bar = lessons::marked_token(views[0].model().config.vocab, token_text, st.highlight_bar);
    return sampling_slide(views[0].sampling().chart(12, bar.value_or(-1)), label, v.title, lang, v.theme, v.caption);
  }
  if (st.action == "open-lens")
    return lens_slide(views[0].whole(), views[0].model().config.heads, label, lang, v.theme, v.title, v.caption);
  if (st.action == "open-overview") {
    OverviewInput in;
    in.run = &views[0].whole();
    for (int32_t t : views[0].tokens()) in.tokens.push_back(label(t));
    in.answer = label(views[0].whole().lens.rows.back().top);
    in.mlp = views[0].model().config.mlp;
    return overview_slide(in, v.title, lang, v.theme, v.caption);
  }
  if (st.action == "ablate-induction") views[0].set_ablated(views[0].heads_with_role("induction"));
  views[0].set_show_contribution(st.action == "show-contribution");
  // what the step puts in the model panel: the whole pass's sequence or a text of its own
  if (st.sequence == lessons::kWholePassSequence)
    views[0].set_tokens(lessons::step_whole_sequence(views[0].model(), st));
  else if (!st.sequence.empty())
    views[0].set_text(st.sequence);
  for (const lessons::HeadName& h : st.highlight_heads) text.highlight.push_back({h.layer, h.head});
  text.row = lessons::marked_position(views[0].tokens(), token_text, st.highlight_token).value_or(-1);
  return head_grid_slide(views[0], text).figure;
}

}  // namespace

namespace {

// The model scenarios' titles (the app's Scenario menu says the same).
const char* model_title(const std::string& scenario, lessons::Lang lang) {
  if (scenario == "model-ablate-induction")
    return in_lang(lang, "학습된 모델: 인덕션 헤드를 끈 채로", "The trained model with its induction heads knocked out");
  return in_lang(lang, "학습된 모델: 헤드 격자", "The trained model: its head grid");
}

ModelSlideText model_text(const std::string& scenario, const ModelView& view, lessons::Lang lang, const std::string& theme) {
  ModelSlideText text;
  text.lang = lang;
  text.theme = theme;
  text.title = model_title(scenario, lang);
  text.footer = "attnsim · " + scenario + " · " + checkpoint_name(view.dir()) + " · " +
                in_lang(lang, "단계 ", "step ") + std::to_string(view.step());
  return text;
}

}  // namespace

std::string scenario_model_dir(const std::string& given) { return given.empty() ? start_model_dir() : given; }

figure::Figure model_scenario_slide(const std::string& scenario, const std::string& model_dir, lessons::Lang lang,
                                    const std::string& theme) {
  ModelView view;
  view.load(scenario_model_dir(model_dir));
  if (scenario == "model-ablate-induction") view.set_ablated(view.heads_with_role("induction"));
  ModelSlideText text = model_text(scenario, view, lang, theme);
  text.caption = view.ablated_heads().empty() && view.text_model()
                     ? in_lang(lang, "헤드마다 화면의 문장 위의 어텐션과 역할. 오른쪽은 검증 텍스트에서의 손실과 정확도.",
                         "Each head's attention on the sentence on screen, with its role; right: loss and accuracy on "
                         "held-out text.")
                 : view.ablated_heads().empty()
                     ? in_lang(lang, "헤드마다 반복된 구간 위의 어텐션과 역할. 오른쪽은 평가 배치에서의 손실과 정확도.",
                         "Each head's attention on a repeated segment, with its role; right: loss and accuracy on the "
                         "evaluation batch.")
                     : in_lang(lang, "X 표시한 헤드를 0으로 두었다. 오른쪽 막대가 그 전과 후의 손실과 정확도다.",
                         "The crossed-out heads are zeroed; the bars on the right are the loss and accuracy before and "
                         "after.");
  return head_grid_slide(view, text).figure;
}

figure::Figure model_timeline_slide(const std::string& scenario, const std::string& model_dir, lessons::Lang lang,
                                    const std::string& theme) {
  ModelView view;
  view.load(scenario_model_dir(model_dir));
  ModelSlideText text = model_text(scenario, view, lang, theme);
  text.title = in_lang(lang, "학습 기록: 헤드가 생겨나는 과정", "The training log: how the heads formed");
  text.caption = in_lang(lang, "부분별 손실과 헤드별 역할 점수. 인덕션 점수가 뛰는 곳이 상전이다.",
                   "Loss per part and every head's role scores; the phase change is where the induction score jumps.");
  return timeline_slide(view.dir(), view.step(), text).figure;
}

figure::Figure model_experiment_slide(const std::string& experiment, const std::string& model_dir,
                                      lessons::Lang lang, const std::string& theme) {
  ModelView view;
  view.load(scenario_model_dir(model_dir));
  const auto result = model::run_experiment(experiment, experiment_options(view.model().config, view.dir(), kExperimentSteps));
  return experiment_slide(result, lang == lessons::Lang::Ko ? Lang::Ko : Lang::En, theme);
}

Deck scenario_deck(const std::string& name, lessons::Lang lang, const std::string& theme, const std::string& model_dir) {
  if (is_model_scenario(name)) {
    // The head grid, then the run's training curves.
    Deck d;
    d.title = model_title(name, lang);
    d.pages.push_back({"00-title", d.title,
                       title_slide(d.title,
                                   in_lang(lang, "attnsim이 직접 학습한 작은 모델: 헤드의 역할, 헤드를 껐을 때, 학습 중의 변화.",
                                     "A small model attnsim trained itself: what its heads do, what knocking them out "
                                     "costs, how they formed."),
                                   "attnsim · " + name, theme)});
    d.pages.push_back({"01-heads", in_lang(lang, "헤드 격자", "head grid"), model_scenario_slide(name, model_dir, lang, theme)});
    d.pages.push_back({"02-training", in_lang(lang, "학습 기록", "training log"), model_timeline_slide(name, model_dir, lang, theme)});
    return d;
  }
  const Scenario& scenario = find_scenario(name);
  if (scenario.decode.enabled) return decode_deck(scenario, lang, theme, model_dir);  // one slide per decode call
  const auto run = compute_run(scenario);
  Deck d;
  d.title = lang == lessons::Lang::Ko ? scenario.title_ko : scenario.title_en;
  if (d.title.empty()) d.title = scenario.name;
  d.pages.push_back({"00-title", d.title,
                     title_slide(d.title, lang == lessons::Lang::Ko ? scenario.summary_ko : scenario.summary_en,
                                 "attnsim · " + scenario.name, theme)});
  int n = 0;
  for (const Step& s : run->run.trace.steps) {
    if (s.skipped()) continue;
    SlideView v;
    v.step = s.name;
    v.lang = lang;
    v.theme = theme;
    v.panel = scenario.has_reference ? "buglab" : "tensor";
    d.pages.push_back({page_name(++n, s.name), s.name, step_slide(scenario, *run, v)});
  }
  return d;
}

Deck lesson_deck(const lessons::Lesson& lesson, lessons::Lang lang, const std::string& theme,
                 const std::function<void(size_t, size_t)>& progress) {
  // Figures and index.md take plain text: a quoted figure ({quote:6.4GB}) keeps its text and
  // loses its mark (only the app's lesson panel draws the quote style).
  auto plain = [lang](const lessons::Text& t) { return lessons::plain_text(lessons::parse_markup(t.get(lang))); };
  Deck d;
  d.title = plain(lesson.title);
  d.pages.push_back({"00-title", d.title,
                     title_slide(d.title, plain(lesson.summary),
                                 "attnsim · " + lesson.id + " · " + std::to_string(lesson.steps.size()) +
                                     in_lang(lang, " 단계", " steps"),
                                 theme)});
  lessons::Evaluator eval;  // the cost steps' figures (one cache for the deck)
  for (size_t i = 0; i < lesson.steps.size(); ++i) {
    if (progress) progress(i, lesson.steps.size());
    const lessons::LessonStep& st = lesson.steps[i];
    SlideView v;
    v.lang = lang;
    v.theme = theme;
    v.head = st.head.value_or(0);
    v.title = plain(st.title);
    const std::string& short_text = st.short_text.get(lang);
    v.caption = lessons::first_paragraph(short_text.empty() ? st.text.get(lang) : short_text);
    if (lessons::is_model_panel(st.panel)) {
      d.pages.push_back({page_name(static_cast<int>(i + 1), st.id), v.title, model_step_slide(st, v)});
      continue;
    }
    // The Figures panel's table (the engine's numbers the step states) for a cost step, and for
    // a flash step about the IO model (flash.* claims at T = 4096: S and P bytes, traffic):
    // there the numbers are the point, not the tiles of the lesson's small run.
    const bool io_model = st.panel == "flash" && std::any_of(st.claims.begin(), st.claims.end(), [](const auto& c) {
                            return c.quantity.rfind("flash.", 0) == 0;
                          });
    if (st.panel == "cost" || io_model) {
      // a cost step about trained runs (MQA against MHA over seeds): their spread instead
      auto figures = step_figures(st, lesson.settings_at(i), eval);
      const bool runs = figures.empty();
      if (runs) figures = run_figures(st, lesson.settings_at(i), eval, lang);
      if (!figures.empty()) {
        const std::string footer = "attnsim · " + lesson.id + " · " + st.id + " · " +
                                   (runs ? in_lang(lang, "학습한 모델들 (엔진)", "trained runs (engine)")
                                         : in_lang(lang, "비용 모델과 IO 모델 (엔진)", "cost model and IO model (engine)"));
        d.pages.push_back({page_name(static_cast<int>(i + 1), st.id), v.title, cost_slide(figures, v, footer)});
        continue;
      }
    }
    const lessons::Resolved r = lessons::resolve(lesson.settings_at(i));
    Scenario s = find_scenario(r.preset);
    lessons::apply(r, s);
    if (st.panel == "decode" && s.decode.enabled) {
      // The decode panel's state at the end of the decode: every call's tokens in the cache
      // (the trained model: the checkpoint the step's claims read, under the step's policy).
      const DecodeRun run = run_decode(s, "", s.decode.trained ? lessons::step_model_dir(st) : "");
      d.pages.push_back({page_name(static_cast<int>(i + 1), st.id), v.title,
                         decode_slide(s, run, run.frames.size() - 1, lang, theme, v.title, v.caption).figure});
      continue;
    }
    if (!st.trace_step.empty()) s.focus_step = st.trace_step;
    s.focus_batch = st.batch;
    const auto run = compute_run(s);
    v.panel = st.panel;
    v.action = st.action;
    if (st.tile && st.tile->size() == 2) v.tile_q = (*st.tile)[0], v.tile_k = (*st.tile)[1];
    d.pages.push_back({page_name(static_cast<int>(i + 1), st.id), v.title, step_slide(s, *run, v)});
  }
  if (progress) progress(lesson.steps.size(), lesson.steps.size());
  return d;
}

}  // namespace attnsim::app
