// Slides of the trained model. See model_slides.h.
//
// Index
//   [SECTION] words
//   [SECTION] head grid slide
//   [SECTION] timeline slide
#include "views/model_slides.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "views/head_names.h"
#include "views/i18n.h"
#include "views/slide_scenes.h"
#include "engine/error.h"
#include "figure/tensor_figure.h"
#include "figure/text_metrics.h"
#include "model/experiments/ablate.h"
#include "model/experiments/baselines.h"
#include "model/training/tasks.h"

namespace attnsim::app {

namespace fig = attnsim::figure;
namespace fs = std::filesystem;

// [SECTION] words ----------------------------------------------------------------------------

namespace {

// The roles' words: the app's (i18n.cpp), so a slide, the model panel and the lessons say
// the same (인덕션 헤드, 앞 토큰, ...).
std::string role_word(const std::string& role, lessons::Lang lang) {
  return tr_in(lang == lessons::Lang::Ko ? Lang::Ko : Lang::En, role.c_str());
}

// Badge colours: the app's grid (panel_model.cpp role_colour), as figure colours.
fig::Color role_color(const std::string& role) {
  if (role == "induction") return fig::rgb(0xFF9614);
  if (role == "previous-token") return fig::rgb(0x28BEEB);
  if (role == "first-token") return fig::rgb(0xAF78F5);
  if (role == "duplicate-token") return fig::rgb(0x78DC5A);
  if (role == "diagonal") return fig::rgb(0xF0DC3C);
  return fig::rgb(0x9696A0);
}

const fig::Color kTrained = fig::rgb(0x3B75AF);  // blue and vermillion: apart for deuteranopia
const fig::Color kKnocked = fig::rgb(0xD55E00);

std::string head_name(int64_t l, int64_t h) { return std::to_string(l) + "." + std::to_string(h); }

}  // namespace

// [SECTION] head grid slide --------------------------------------------------------------------

namespace {

// Loss per part on the evaluation batch with `heads` knocked out (zero ablation: what model.*
// with `ablate` measures; a language model: on its held-out windows, where every target is
// part kOther), remembered per loaded checkpoint and set of heads: a pass over
// the 128-sequence batch costs tens of ms, and a learner toggles the same heads back and
// forth. Called from the slide view's worker and from exports, so the memo has a lock.
model::LossStats evaluation_stats(const ModelView& view, std::vector<model::HeadRef> heads) {
  std::sort(heads.begin(), heads.end(), [](const model::HeadRef& a, const model::HeadRef& b) {
    return a.layer != b.layer ? a.layer < b.layer : a.head < b.head;
  });
  std::string key = std::to_string(view.load_id());
  for (const model::HeadRef& h : heads) key += " " + head_name(h.layer, h.head);
  static std::mutex mutex;
  static std::map<std::string, model::LossStats> memo;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = memo.find(key); it != memo.end()) return it->second;
  }
  const model::Model& m = view.model();
  const model::Batch batch = view.text_model() && view.heldout_batch().batch > 0 ? view.heldout_batch()
                                                                                 : model::ablation_batch(m.config);
  model::Ablation ab;
  ab.heads = std::move(heads);
  const model::LossStats stats =
      model::cross_entropy(model::forward(m, batch, ab.heads.empty() ? nullptr : &ab).logits, batch);
  std::lock_guard<std::mutex> lock(mutex);
  if (memo.size() >= 256) memo.clear();  // bounded: a session toggles far fewer sets
  memo.emplace(key, stats);
  return stats;
}

}  // namespace

AblationNumbers ablation_numbers(const ModelView& view) {
  AblationNumbers n;
  n.trained = evaluation_stats(view, {});
  n.has_ablation = !view.ablated_heads().empty();
  if (n.has_ablation) n.ablated = evaluation_stats(view, view.ablated_heads());
  return n;
}

namespace {

// A head's badge text: its name and its strongest pattern beside the chance (head_names.h:
// "0.1 first token 0.91 · chance 0.06"; on two lines "0.1 first token 0.91" over "chance 0.06",
// or "0.1 first token" over "0.91 · chance 0.06")
// in at most `max_lines` lines that each fit `width` at kLabelMin, the pattern's words
// shortened and then the chance left out before anything is cut; the colour is the role's.
std::vector<std::string> badge_lines(int64_t l, int64_t h, const HeadName& named, lessons::Lang lang, float width,
                                     int max_lines) {
  const Lang ui = lang == lessons::Lang::Ko ? Lang::Ko : Lang::En;
  const std::string name = head_name(l, h), chance = head_chance_text(named, ui);
  const std::vector<std::string> forms = head_name_forms(named, ui);  // the full form first
  auto fits = [&](const std::string& x) { return fig::text_width(x, fig::kLabelMin) <= width; };
  if (fits(name + " " + forms.front())) return {name + " " + forms.front()};
  if (max_lines >= 2) {
    char score[16];
    std::snprintf(score, sizeof score, "%.2f", named.score);
    const std::string words[] = {pattern_word(named.pattern, ui), pattern_short(named.pattern, ui)};
    for (const std::string& word : words)  // "0.1 first token 0.91" over "chance 0.06"
      if (fits(name + " " + word + " " + score) && fits(chance)) return {name + " " + word + " " + score, chance};
    for (const std::string& word : words)  // "0.1 first token" over "0.91 · chance 0.06"
      if (fits(name + " " + word) && fits(score + (" · " + chance))) return {name + " " + word, score + (" · " + chance)};
  }
  for (const std::string& form : forms) {
    if (fits(name + " " + form)) return {name + " " + form};
    if (max_lines >= 2 && fits(name) && fits(form)) return {name, form};
  }
  // too narrow even for the head's number: the colour alone (the slide's legend names it)
  return fits(name) ? std::vector<std::string>{name} : std::vector<std::string>{};
}

// Where a grid goes: its top-left, the cells' size and spacing, the badge band over each cell.
struct GridPlace {
  float x = 0, y = 0;     // the first cell's badge band starts at (x, y)
  float cell = 0, gap = 0, row_gap = 0;
  int badge_lines = 1;    // 1: the badge band is 40 tall; 2: 76
  float label_x = -1;     // where the "L0" labels go; < 0: none
  float badge_h() const { return badge_lines == 1 ? 40.0f : 76.0f; }
  float row_pitch() const { return badge_h() + cell + row_gap; }
};

// One model's layers x heads grid at `at`: a badge band over each cell, the knocked-out heads
// dimmed, framed and crossed (the first Line of each cross goes to `crosses`). Returns each
// head's heatmap rectangle (layer * heads + head); the roles drawn go to `roles`.
std::vector<fig::Rect> draw_head_grid(fig::Figure& f, const fig::Theme& th, const GridPlace& at, const ModelView& view,
                                      lessons::Lang lang, std::vector<size_t>& crosses, std::set<std::string>& roles) {
  std::vector<fig::Rect> cells;
  const int64_t layers = view.model().config.layers, heads = view.model().config.heads;
  const model::HeadTable& table = view.roles();
  const float line_h = 36;
  for (int64_t l = 0; l < layers; ++l) {
    const Step* alpha = view.shown().traces[static_cast<size_t>(l)].find("alpha");
    if (!alpha || !alpha->out.defined()) throw Error("layer " + std::to_string(l) + " has no alpha");
    // Contribution shares sum to 1 per row like alpha, so they draw on alpha's 0..1 scale.
    const auto blocks = fig::tensor_blocks(
        "alpha", view.show_contribution() ? view.shown().contributions[static_cast<size_t>(l)] : alpha->out, 0);
    const float y = at.y + static_cast<float>(l) * at.row_pitch() + at.badge_h();
    if (at.label_x >= 0)
      f.text(at.label_x, y + at.cell / 2, in_lang(lang, "층 ", "L") + std::to_string(l), fig::kLabelMin, th.muted,
             fig::Anchor::Start, true, "label");
    for (int64_t h = 0; h < heads && h < static_cast<int64_t>(blocks.size()); ++h) {
      const float x = at.x + static_cast<float>(h) * (at.cell + at.gap);
      const fig::Rect r{x, y, at.cell, at.cell};
      cells.push_back(r);
      fig::Heatmap hm;
      hm.rect = r;
      hm.rows = blocks[static_cast<size_t>(h)].rows;
      hm.cols = blocks[static_cast<size_t>(h)].cols;
      hm.values = blocks[static_cast<size_t>(h)].values;
      hm.map = fig::ColorMapId::Viridis;
      hm.lo = 0;
      hm.hi = 1;
      hm.gap = th.background;
      f.heatmap(std::move(hm));
      f.box(r, {0, 0, 0, 0}, th.frame, 1);
      // Badge: "1.0 induction 0.79 · chance 0.05": the head's strongest pattern on the sequence
      // its heatmap shows, on the colour of its role on the scoring batch (grey: no role there).
      const model::HeadScores& sc = table.at(l, h);
      const std::string role = model::role_label(sc);
      roles.insert(role);
      const HeadName named = name_head(view.shown().patterns.at(l, h), view.shown().chance);
      const auto lines = badge_lines(l, h, named, lang, at.cell - 12, at.badge_lines);
      float w = 0;
      for (const std::string& t : lines) w = std::max(w, fig::text_width(t, fig::kLabelMin));
      const float band = at.badge_h(), top = y - band + 2, text_h = line_h * static_cast<float>(lines.size());
      f.box({x, top, lines.empty() ? at.cell : std::min(at.cell, w + 12), band - 6}, role_color(role));
      for (size_t i = 0; i < lines.size(); ++i)
        f.text(x + 6, top + (band - 6 - text_h) / 2 + line_h * (static_cast<float>(i) + 0.5f), lines[i], fig::kLabelMin,
               fig::rgb(0x101010), fig::Anchor::Start, false, "label");
      if (view.is_ablated({l, h})) {
        // Knocked out: dimmed, framed and crossed, as in the app's grid.
        f.box(r, th.background.r > 0.5f ? fig::Color{1, 1, 1, 0.45f} : fig::Color{0, 0, 0, 0.45f}, kKnocked, 6);
        crosses.push_back(f.items.size());
        f.line(r.x, r.y, r.right(), r.bottom(), kKnocked, 5);
        f.line(r.right(), r.y, r.x, r.bottom(), kKnocked, 5);
      }
    }
  }
  return cells;
}

// The query row `row` of every head's map framed: what the token a lesson step names
// (highlight.token) attends to. Rows are the sequence's positions, `n` of them.
void frame_row(fig::Figure& f, const fig::Theme& th, const std::vector<fig::Rect>& cells, int64_t row, int64_t n) {
  if (row < 0 || row >= n) return;
  for (const fig::Rect& c : cells) {
    const float h = c.h / static_cast<float>(n);
    f.box({c.x - 3, c.y + h * static_cast<float>(row) - 1, c.w + 6, std::max(h, 4.0f) + 2}, {0, 0, 0, 0}, th.highlight, 3);
  }
}

// One model's grid filling `area` (the label column "L0" on the left, one-line badges).
std::vector<fig::Rect> add_head_grid(fig::Figure& f, const fig::Theme& th, const fig::Rect& area, const ModelView& view,
                                     lessons::Lang lang, std::vector<size_t>& crosses) {
  const int64_t layers = view.model().config.layers, heads = view.model().config.heads;
  GridPlace at;
  at.gap = at.row_gap = heads > 4 ? 12 : 24;
  const float label_w = 80;
  at.cell = std::max(8.0f, std::min((area.w - label_w - at.gap * static_cast<float>(heads - 1)) / static_cast<float>(heads),
                                    (area.h - static_cast<float>(layers) * (at.badge_h() + at.row_gap)) /
                                        static_cast<float>(layers)));
  at.x = area.x + label_w;
  at.y = area.y;
  at.label_x = area.x;
  std::set<std::string> roles;
  return draw_head_grid(f, th, at, view, lang, crosses, roles);
}

}  // namespace

HeadGridView head_grid_view(const ModelView& view, lessons::Lang lang, const std::string& theme, float width,
                            float max_cell, float below, int64_t row) {
  const fig::Theme& th = fig::theme_by_name(theme);
  const int64_t layers = view.model().config.layers, heads = view.model().config.heads;
  HeadGridView out;
  GridPlace at;
  at.gap = 16;
  at.row_gap = below;
  at.badge_lines = 2;  // room for the head's name over its chance
  const float label_w = 60;
  at.cell = std::clamp((width - label_w - at.gap * static_cast<float>(heads - 1)) / static_cast<float>(heads), 8.0f, max_cell);
  at.x = label_w;
  at.y = 0;
  at.label_x = 0;
  fig::Figure& f = out.figure;
  f.theme = th.name;
  f.background = th.background;
  f.width = width;
  f.height = static_cast<float>(layers) * at.row_pitch();
  std::vector<size_t> crosses;
  std::set<std::string> roles;
  out.cells = draw_head_grid(f, th, at, view, lang, crosses, roles);
  frame_row(f, th, out.cells, row, static_cast<int64_t>(view.tokens().size()));
  for (int64_t l = 0; l < layers; ++l)
    out.row_label_y.push_back(static_cast<float>(l) * at.row_pitch() + at.badge_h() + at.cell / 2);
  return out;
}

namespace {

// A row of the roles' colours and words (the two-line badges may leave the word out).
void add_role_legend(fig::Figure& f, const fig::Theme& th, float x, float y, float right, const std::set<std::string>& roles,
                     lessons::Lang lang) {
  for (const char* role : {"induction", "previous-token", "first-token", "duplicate-token", "diagonal", "mixed"}) {
    if (!roles.count(role)) continue;
    const std::string word = role_word(role, lang);
    const float w = 40 + fig::text_width(word, fig::kLabelMin);
    if (x + w > right) break;
    f.box({x, y - 14, 28, 28}, role_color(role));
    f.text(x + 36, y, word, fig::kLabelMin, th.text, fig::Anchor::Start, false, "legend");
    x += w + 28;
  }
}

fig::Slide grid_slide_frame(const ModelSlideText& text, const fig::Theme& th, bool contribution) {
  fig::SlideSpec spec;
  spec.title = text.title;
  spec.caption = text.caption;
  spec.footer = text.footer;
  spec.legend.map = fig::ColorMapId::Viridis;
  spec.legend.lo = 0;
  spec.legend.hi = 1;
  spec.legend.what = contribution ? in_lang(text.lang, "‖α·W_O v‖의 몫 (기여)", "share of ‖α·W_O v‖ (contribution)")
                                  : in_lang(text.lang, "alpha (어텐션 가중치)", "alpha (attention weight)");
  return fig::make_slide(spec, th);
}

// A part's loss or accuracy; NaN (no bar) for a part the model's batch has no target in (a
// language model's held-out text has no first copy), which would otherwise read as 0.
double part_value(const model::PartStats& p, bool accuracy) {
  if (p.count == 0) return std::nan("");
  return accuracy ? p.accuracy() : p.loss();
}

// Loss (nats) and top-1 accuracy on the first copy and the repeated part (a language model:
// on its held-out text, one group), one bar per run, stacked in `charts`, each over its
// baseline: the uniform guess's loss ln(V-1) and its accuracy 1/(V-1) (model/baselines.h).
void add_part_bars(fig::Figure& f, const fig::Theme& th, const fig::Rect& charts, lessons::Lang lang,
                   const model::ModelConfig& config, const std::vector<std::pair<std::string, fig::Color>>& bars,
                   const std::vector<model::LossStats>& runs, bool text, fig::BarLayout& loss_out,
                   fig::BarLayout& acc_out) {
  auto values = [&](auto get) {
    std::vector<double> v;
    for (const model::LossStats& r : runs) v.push_back(get(r));
    return v;
  };
  const char* first_name = in_lang(lang, "첫 사본", "first copy");
  const char* repeat_name = in_lang(lang, "반복 구간", "repeated part");
  const char* text_name = in_lang(lang, "검증 텍스트", "held-out text");
  fig::BarChart loss;
  loss.title = text ? in_lang(lang, "손실 (nats, 검증 텍스트)", "loss (nats, held-out text)")
                    : in_lang(lang, "손실 (nats, 평가 배치)", "loss (nats, evaluation batch)");
  loss.bars = bars;
  if (text)
    loss.groups = {{text_name, values([](const model::LossStats& s) { return s.all.loss(); })}};
  else
    loss.groups = {{first_name, values([](const model::LossStats& s) { return part_value(s.parts[model::kFirst], false); })},
                   {repeat_name, values([](const model::LossStats& s) { return part_value(s.parts[model::kRepeat], false); })}};
  double hi = 0;
  for (const auto& g : loss.groups)
    for (double v : g.values) hi = std::max(hi, v);
  auto fixed = [](double v, int decimals) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return std::string(buf);
  };
  const double uniform = model::uniform_loss(config), chance = model::chance_accuracy(config);
  const auto targets = static_cast<long long>(model::vocab_targets(config));
  loss.y_hi = std::max(1.0, std::max(hi, uniform) * 1.1);
  // The baselines' labels go in the titles: over the bars they would cover the values.
  loss.title += in_lang(lang, " · 점선: 균등 추측 ln ", " · dashed: uniform guess ln ") + std::to_string(targets) + " = " +
                fixed(uniform, 2);
  loss.levels.push_back({uniform, "", th.muted});
  loss.legend = false;  // the accuracy chart under it has the same bars and says it
  fig::BarChart acc;
  acc.title = in_lang(lang, "정확도 (top-1)", "accuracy (top-1)");
  acc.bars = bars;
  if (text)
    acc.groups = {{text_name, values([](const model::LossStats& s) { return s.all.accuracy(); })}};
  else
    acc.groups = {{first_name, values([](const model::LossStats& s) { return part_value(s.parts[model::kFirst], true); })},
                  {repeat_name, values([](const model::LossStats& s) { return part_value(s.parts[model::kRepeat], true); })}};
  acc.y_hi = 1;
  acc.decimals = 1;
  acc.value_scale = 100;
  acc.suffix = " %";
  // a chance under 1 % keeps two significant digits (1/4256 is 0.023 %, not 0.0 %)
  char chance_pct[32];
  std::snprintf(chance_pct, sizeof chance_pct, 100 * chance < 1 ? "%.2g" : "%.1f", 100 * chance);
  acc.title += in_lang(lang, " · 점선: 균등 추측 1/", " · dashed: uniform guess 1/") + std::to_string(targets) + " = " +
               chance_pct + " %";
  acc.levels.push_back({chance, "", th.muted});
  // the same room for both charts' bars: the lower one's legend comes on top of its share
  const float legend_h = fig::bar_legend_height(acc, charts.w), half = (charts.h - 30 - legend_h) / 2;
  loss_out = fig::add_bar_chart(f, th, {charts.x, charts.y, charts.w, half}, loss);
  acc_out = fig::add_bar_chart(f, th, {charts.x, charts.y + half + 30, charts.w, half + legend_h}, acc);
}

}  // namespace

HeadGridSlide head_grid_slide(const ModelView& view, const ModelSlideText& text) {
  if (!view.loaded()) throw Error("no model loaded");
  const fig::Theme& th = fig::theme_by_name(text.theme);
  const lessons::Lang lang = text.lang;
  HeadGridSlide out;
  out.numbers = ablation_numbers(view);
  fig::Slide s = grid_slide_frame(text, th, view.show_contribution());
  // Left: the grid (62 % of the width); right: the two bar charts.
  const fig::Rect grid_area{s.visual.x, s.visual.y, s.visual.w * 0.62f, s.visual.h};
  const fig::Rect charts{grid_area.right() + 40, s.visual.y, s.visual.right() - grid_area.right() - 40, s.visual.h};
  out.cells = add_head_grid(s.figure, th, grid_area, view, lang, out.cross_items);
  // The heads the step's text names, framed with their badges, as the lesson panel selects them.
  const int64_t heads = view.model().config.heads;
  for (const model::HeadRef& h : text.highlight) {
    const size_t at = static_cast<size_t>(h.layer * heads + h.head);
    if (h.layer < 0 || h.head < 0 || h.head >= heads || at >= out.cells.size()) continue;
    const fig::Rect& c = out.cells[at];
    s.figure.box({c.x - 6, c.y - 44, c.w + 12, c.h + 50}, {0, 0, 0, 0}, th.accent, 5);
  }
  frame_row(s.figure, th, out.cells, text.row, static_cast<int64_t>(view.tokens().size()));

  const AblationNumbers& n = out.numbers;
  const size_t knocked = view.ablated_heads().size();
  std::vector<std::pair<std::string, fig::Color>> bars = {{in_lang(lang, "학습된 그대로", "as trained"), kTrained}};
  std::vector<model::LossStats> runs = {n.trained};
  if (n.has_ablation) {
    bars.emplace_back(std::to_string(knocked) + in_lang(lang, "개 헤드 제거", knocked == 1 ? " head knocked out" : " heads knocked out"),
                      kKnocked);
    runs.push_back(n.ablated);
  }
  add_part_bars(s.figure, th, charts, lang, view.model().config, bars, runs, view.text_model(), out.loss, out.accuracy);
  s.figure.kind = "head-grid";
  out.figure = std::move(s.figure);
  return out;
}

CompareSlide compare_slide(const std::vector<std::pair<std::string, const ModelView*>>& models, const ModelSlideText& text) {
  if (models.empty()) throw Error("no model to compare");
  const fig::Theme& th = fig::theme_by_name(text.theme);
  const lessons::Lang lang = text.lang;
  CompareSlide out;
  fig::Slide s = grid_slide_frame(text, th, false);
  // The bars on the right, narrower than on the single grid slide; the grids side
  // by side on one row per layer, every cell the same size, so the one-head model's cells
  // are as large as the eight-head model's and every badge has the same width to fill.
  // 600: room for the charts' titles in two lines and "84.1 %" over each of 2 x 3 bars.
  const float charts_w = 600, label_w = 64, gap = 12, model_gap = 60, header_h = 48, legend_h = 48;
  const fig::Rect charts{s.visual.right() - charts_w, s.visual.y, charts_w, s.visual.h};
  const fig::Rect grid_area{s.visual.x, s.visual.y, charts.x - 40 - s.visual.x, s.visual.h};
  int64_t layers = 0, columns = 0;
  for (const auto& [name, view] : models) {
    if (!view || !view->loaded()) throw Error("no model loaded");
    layers = std::max(layers, view->model().config.layers);
    columns += view->model().config.heads;
  }
  const float n = static_cast<float>(models.size());
  GridPlace at;
  at.gap = gap;
  at.row_gap = 20;
  at.badge_lines = 2;
  at.cell = std::max(8.0f, std::min((grid_area.w - label_w - gap * (static_cast<float>(columns) - n) - model_gap * (n - 1)) /
                                        static_cast<float>(columns),
                                    (grid_area.h - header_h - legend_h - static_cast<float>(layers) * (at.badge_h() + at.row_gap)) /
                                        static_cast<float>(layers)));
  at.y = grid_area.y + header_h;
  at.x = grid_area.x + label_w;
  static const unsigned colours[] = {0x3B75AF, 0xE69F00, 0x009E73, 0xCC79A7};  // Okabe-Ito: apart for CVD
  std::vector<std::pair<std::string, fig::Color>> bars;
  std::set<std::string> roles;
  for (size_t i = 0; i < models.size(); ++i) {
    const auto& [name, view] = models[i];
    const int64_t h = view->model().config.heads;
    const fig::Color colour = fig::rgb(colours[i % 4]);
    // Over the model's columns: its head count in its bars' colour (the bars' legend names it).
    const float span = static_cast<float>(h) * at.cell + static_cast<float>(h - 1) * gap;
    const std::string head_count = "h = " + std::to_string(h);
    // the swatch in the gap before the columns (the label column for the first), so a one-head
    // model's narrow column still has room for its count, up to the next model's swatch
    s.figure.box({at.x - 32, grid_area.y + 4, 28, 28}, colour);
    fig::fitted_text(s.figure, at.x, grid_area.y + 18, head_count, fig::kLabelMin,
                     span + (i + 1 < models.size() ? model_gap - 36 : 0), th.text, fig::Anchor::Start, true, "label");
    at.label_x = i == 0 ? grid_area.x : -1;
    std::vector<size_t> crosses;
    out.cells.push_back(draw_head_grid(s.figure, th, at, *view, lang, crosses, roles));
    out.stats.push_back(evaluation_stats(*view, {}));
    bars.emplace_back(name, colour);
    at.x += span + model_gap;
  }
  // The roles' colours under the grids (a narrow cell's badge may leave the word out).
  add_role_legend(s.figure, th, grid_area.x, at.y + static_cast<float>(layers) * at.row_pitch() + legend_h / 2,
                  grid_area.right(), roles, lang);
  add_part_bars(s.figure, th, charts, lang, models.front().second->model().config, bars, out.stats,
                models.front().second->text_model(), out.loss, out.accuracy);  // the baselines of the first: the compared runs share a vocabulary
  s.figure.kind = "compare";
  out.figure = std::move(s.figure);
  return out;
}

// [SECTION] timeline slide ---------------------------------------------------------------------

std::string run_of_checkpoint(const std::string& checkpoint_dir) {
  const fs::path p = fs::path(checkpoint_dir).lexically_normal();
  const fs::path dir = p.has_filename() ? p : p.parent_path();
  if (dir.parent_path().filename() == "checkpoints") return dir.parent_path().parent_path().string();
  return dir.string();
}

std::string checkpoint_name(const std::string& checkpoint_dir) {
  const fs::path run = fs::path(run_of_checkpoint(checkpoint_dir));
  // A Hugging Face cache folder: models--ORG--NAME/snapshots/COMMIT reads as ORG/NAME.
  if (run.parent_path().filename() == "snapshots") {
    std::string repo = run.parent_path().parent_path().filename().string();
    if (repo.rfind("models--", 0) == 0) repo.erase(0, 8);
    for (size_t at = repo.find("--"); at != std::string::npos; at = repo.find("--", at + 1)) repo.replace(at, 2, "/");
    return repo;
  }
  return run.filename().string();
}

namespace {

// A family's shades: the band a tint of the colour on the background, the other seeds a
// lighter line, the open run in the text colour (it stands out on print and projector).
struct Family {
  fig::Color line, band, seeds;
};
Family family(const fig::Theme& th, fig::Color c) { return {c, fig::mix(th.background, c, 0.25f), fig::mix(th.background, c, 0.55f)}; }

// Over the seeds of a group, one value per logged step: the band (min..max) and the median,
// and each seed as a thin line, the open run last and highlighted. `pick` reads a spread
// point (nullopt: not logged by every run there), `value` a run's point (< 0: not logged).
template <class Pick, class Value>
void add_group_curves(fig::LinePlot& p, const fig::Theme& th, const RunGroup& g, const Family& fam, Pick pick,
                      Value value, size_t stride, const std::string& band_label, const std::string& median_label,
                      Lang ui, double* hi) {
  fig::BandSeries band{band_label, fam.band, {}};
  fig::Series median{median_label, fam.line, {}, 4};
  const size_t n = g.spread.size();
  for (size_t i = 0; i < n; ++i) {
    const std::optional<Spread> sp = pick(g.spread[i]);
    if (!sp) continue;
    *hi = std::max(*hi, sp->max);
    if (i % stride != 0 && i + 1 != n) continue;
    const double x = static_cast<double>(g.spread[i].step);
    band.points.push_back({x, sp->min, sp->max});
    median.points.emplace_back(x, sp->median);
  }
  bool others_named = false;
  std::vector<fig::Series> seeds;
  for (size_t r = 0; r < g.runs.size(); ++r) {
    const bool open = r == g.open;
    std::string label;
    if (open) label = trf_in(ui, "this run (seed %llu)", static_cast<unsigned long long>(g.seeds[r]));
    else if (!others_named) label = tr_in(ui, "other seeds"), others_named = true;
    fig::Series sr{label, open ? th.text : fam.seeds, {}, open ? 2.5f : 1.5f};
    const std::vector<TimelinePoint>& pts = g.timelines[r].points;
    for (size_t i = 0; i < pts.size(); ++i) {
      const double v = value(pts[i]);
      if (v < 0 || (i % stride != 0 && i + 1 != pts.size())) continue;
      sr.points.emplace_back(static_cast<double>(pts[i].step), v);
    }
    seeds.push_back(std::move(sr));
  }
  std::rotate(seeds.begin() + static_cast<std::ptrdiff_t>(g.open), seeds.begin() + static_cast<std::ptrdiff_t>(g.open) + 1,
              seeds.end());  // the open run drawn over the others
  p.bands.push_back(std::move(band));
  for (fig::Series& sr : seeds) p.series.push_back(std::move(sr));
  p.series.push_back(std::move(median));
}

}  // namespace

std::vector<fig::PlotLayout> add_timeline_plots(fig::Figure& f, const fig::Theme& th, const fig::Rect& visual,
                                               const Timeline& tl, double x_hi, int64_t shown_step, lessons::Lang lang,
                                               bool grid, const TimelineExtras& extras) {
  std::vector<fig::PlotLayout> plots;
  std::vector<fig::Marker> markers;
  if (const int64_t phase = tl.phase_change_step(); phase >= 0)
    markers.push_back({static_cast<double>(phase), in_lang(lang, "상전이", "phase change"), fig::rgb(0xD55E00), false});
  if (shown_step >= 0)
    markers.push_back({static_cast<double>(shown_step), in_lang(lang, "이 단계", "this step"), th.text, true});
  const char* step_word = in_lang(lang, "단계", "step");
  const Lang ui = lang == lessons::Lang::Ko ? Lang::Ko : Lang::En;
  x_hi = std::max(x_hi, 1.0);
  const RunGroup* group = extras.group && extras.group->several() ? extras.group : nullptr;
  const int seeds = group ? static_cast<int>(group->runs.size()) : 1;

  // 2 x 2 (a slide) or one column (the Training tab): the loss per part, then one role score
  // per plot.
  const float gx = 48, gy = 24;
  const float w = grid ? (visual.w - gx) / 2 : visual.w, h = grid ? (visual.h - gy) / 2 : (visual.h - 3 * gy) / 4;
  auto area = [&](int i) {
    const int col = grid ? i % 2 : 0, row = grid ? i / 2 : i;
    return fig::Rect{visual.x + static_cast<float>(col) * (w + gx), visual.y + static_cast<float>(row) * (h + gy), w, h};
  };
  // A live run logs every step: a loss line keeps at most ~400 of its points (every k-th and
  // the last); the y range still covers them all. (The runs of a group log the same steps.)
  const size_t stride = std::max<size_t>(1, (tl.points.size() + 399) / 400);
  const fig::Color blue = fig::rgb(0x3B75AF), orange = fig::rgb(0xE69F00), green = fig::rgb(0x009E73);
  std::vector<fig::LinePlot> specs;
  {
    fig::LinePlot p;
    p.x_hi = x_hi;
    p.x_unit = step_word;
    double hi = 0;
    // Induction runs log the loss per part (first copy, repeated part); recall and gist runs
    // log parts of their own, and their plot is the whole loss.
    const bool parts = std::any_of(tl.points.begin(), tl.points.end(),
                                   [](const TimelinePoint& q) { return q.loss_repeat >= 0; });
    if (group && !parts) {
      p.title = trf_in(ui, "loss over %d seeds (nats)", seeds);
      add_group_curves(
          p, th, *group, family(th, orange), [](const SpreadPoint& sp) { return std::optional<Spread>(sp.loss); },
          [](const TimelinePoint& q) { return q.loss; }, stride, trf_in(ui, "loss: min-max of %d seeds", seeds),
          tr_in(ui, "loss: median"), ui, &hi);
    } else if (group) {
      // The seeds' spread: the first copy's band and median (random tokens: it stays near the
      // uniform guess), the repeated part's band, median and every seed.
      p.title = trf_in(ui, "loss per part over %d seeds (nats)", seeds);
      const Family first = family(th, blue);
      fig::BandSeries first_band{"", first.band, {}};
      fig::Series first_median{tr_in(ui, "first copy: median"), first.line, {}, 4};
      for (size_t i = 0; i < group->spread.size(); ++i) {
        const SpreadPoint& sp = group->spread[i];
        if (!sp.loss_first) continue;
        hi = std::max(hi, sp.loss_first->max);
        if (i % stride != 0 && i + 1 != group->spread.size()) continue;
        first_band.points.push_back({static_cast<double>(sp.step), sp.loss_first->min, sp.loss_first->max});
        first_median.points.emplace_back(static_cast<double>(sp.step), sp.loss_first->median);
      }
      p.bands.push_back(std::move(first_band));
      p.series.push_back(std::move(first_median));
      add_group_curves(
          p, th, *group, family(th, orange), [](const SpreadPoint& sp) { return sp.loss_repeat; },
          [](const TimelinePoint& q) { return q.loss_repeat; }, stride,
          trf_in(ui, "repeated part: min-max of %d seeds", seeds), tr_in(ui, "repeated part: median"), ui, &hi);
    } else if (!parts) {
      p.title = tr_in(ui, "loss (nats)");
      fig::Series all{in_lang(lang, "손실", "loss"), orange, {}, 4};
      // A language model's log also scores held-out text at some steps: its own line.
      fig::Series heldout{in_lang(lang, "검증 텍스트 손실", "held-out loss"), blue, {}, 4};
      for (size_t i = 0; i < tl.points.size(); ++i) {
        const TimelinePoint& q = tl.points[i];
        hi = std::max({hi, q.loss, q.heldout});
        if (q.heldout >= 0) heldout.points.emplace_back(static_cast<double>(q.step), q.heldout);
        if (i % stride == 0 || i + 1 == tl.points.size()) all.points.emplace_back(static_cast<double>(q.step), q.loss);
      }
      p.series = {all};
      if (!heldout.points.empty()) p.series.push_back(std::move(heldout));
    } else {
      p.title = tr_in(ui, "loss per part (nats)");
      fig::Series first{in_lang(lang, "첫 사본", "first copy"), blue, {}, 4};
      fig::Series repeat{in_lang(lang, "반복 구간", "repeated part"), orange, {}, 4};
      for (size_t i = 0; i < tl.points.size(); ++i) {
        const TimelinePoint& q = tl.points[i];
        hi = std::max({hi, q.loss_first, q.loss_repeat});
        if (i % stride != 0 && i + 1 != tl.points.size()) continue;
        if (q.loss_first >= 0) first.points.emplace_back(static_cast<double>(q.step), q.loss_first);
        if (q.loss_repeat >= 0) repeat.points.emplace_back(static_cast<double>(q.step), q.loss_repeat);
      }
      p.series = {first, repeat};
    }
    if (extras.config) {
      // The baseline: a uniform guess over the V - 1 tokens that can be targets.
      const double u = model::uniform_loss(*extras.config);
      hi = std::max(hi, u);
      p.levels.push_back({u,
                          trf_in(ui, "uniform guess: ln %lld = %.2f",
                                 static_cast<long long>(model::vocab_targets(*extras.config)), u),
                          th.muted});
    }
    p.y_hi = std::max(1.0, std::ceil(hi));
    p.markers = markers;
    specs.push_back(std::move(p));
  }
  struct Role {
    const char* title;  // English; the Korean is the Training tab's (i18n.cpp)
    double model::HeadScores::*field;
  };
  const Role role_plots[3] = {{"induction score per head", &model::HeadScores::induction},
                              {"previous-token score per head", &model::HeadScores::previous},
                              {"first-token share per head", &model::HeadScores::first}};
  for (int i = 0; i < 3; ++i) {
    fig::LinePlot p;
    p.x_hi = x_hi;
    p.x_unit = step_word;
    p.markers = markers;
    if (group && i == 0) {
      // Over the seeds: the best head's induction score (where the phase change is read).
      p.title = trf_in(ui, "best induction score (any head) over %d seeds", seeds);
      double hi = 1;
      add_group_curves(
          p, th, *group, family(th, green), [](const SpreadPoint& sp) { return sp.best_induction; },
          [](const TimelinePoint& q) { return q.scored ? best_induction(q.scores) : -1.0; }, stride,
          trf_in(ui, "min-max of %d seeds", seeds), tr_in(ui, "median"), ui, &hi);
      p.y_hi = std::ceil(hi);
      specs.push_back(std::move(p));
      continue;
    }
    p.title = tr_in(ui, role_plots[i].title);
    for (int64_t l = 0; l < tl.layers; ++l)
      for (int64_t hd = 0; hd < tl.heads; ++hd) {
        // Layer 0 in blues, layer 1 in oranges, ...: one hue family per layer.
        static const unsigned families[4][2] = {{0x1F4E89, 0x74B3E8}, {0xA33A00, 0xF5B041}, {0x2E7D32, 0xA5D6A7},
                                                {0x6A1B9A, 0xCE93D8}};
        const auto& fam = families[l % 4];
        const float t = tl.heads > 1 ? static_cast<float>(hd) / static_cast<float>(tl.heads - 1) : 0;
        const fig::Color a = fig::rgb(fam[0]), b = fig::rgb(fam[1]);
        // One legend entry per layer (its first head); the shades tell its heads apart.
        fig::Series sr{hd == 0 ? std::string(in_lang(lang, "층 ", "layer ")) + std::to_string(l) + in_lang(lang, " 헤드", " heads") : "",
                       {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t, 1},
                       {},
                       3};
        for (const TimelinePoint& q : tl.points)
          if (q.scored && q.scores.layers == tl.layers && q.scores.heads == tl.heads)
            sr.points.emplace_back(static_cast<double>(q.step), q.scores.at(l, hd).*(role_plots[i].field));
        p.series.push_back(std::move(sr));
      }
    specs.push_back(std::move(p));
  }
  // One room for the y labels, so the axes of a column (and of a grid's columns) line up.
  float label_w = 0;
  for (const fig::LinePlot& p : specs) label_w = std::max(label_w, fig::y_label_width(p));
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i].y_label_w = label_w;
    plots.push_back(fig::add_line_plot(f, th, area(static_cast<int>(i)), specs[i]));
  }
  return plots;
}

TimelineSlide timeline_slide(const std::string& checkpoint_dir, int64_t shown_step, const ModelSlideText& text) {
  const fig::Theme& th = fig::theme_by_name(text.theme);
  TimelineSlide out;
  // The run and the other seeds of its recipe (run_group.h): refused, with the reason, when
  // their logs do not line up step for step.
  out.group = read_run_group(run_of_checkpoint(checkpoint_dir));
  out.timeline = out.group.timelines[out.group.open];
  const Timeline& tl = out.timeline;
  if (tl.points.empty()) throw Error(checkpoint_dir + ": the training log is empty");
  out.phase_step = tl.phase_change_step();
  out.shown_step = shown_step;
  const Lang ui = text.lang == lessons::Lang::Ko ? Lang::Ko : Lang::En;

  fig::SlideSpec spec;
  spec.title = text.title;
  spec.caption = text.caption;
  if (out.group.several()) {
    out.learned = count_learned(out.group);
    spec.caption += (spec.caption.empty() ? "" : " ") +
                    trf_in(ui, "%lld of %lld seeds learned (repeat accuracy >= %.0f%%)",
                           static_cast<long long>(out.learned->learned), static_cast<long long>(out.learned->runs),
                           100 * model::kRunLearned);
  }
  spec.footer = text.footer;
  spec.has_legend = false;
  fig::Slide s = fig::make_slide(spec, th);
  out.plots = add_timeline_plots(s.figure, th, s.visual, tl, static_cast<double>(std::max<int64_t>(1, tl.points.back().step)),
                                 shown_step, text.lang, true, {out.group.config, &out.group});
  s.figure.kind = "timeline";
  out.figure = std::move(s.figure);
  return out;
}

}  // namespace attnsim::app
