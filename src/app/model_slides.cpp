// Slides of the trained model. See model_slides.h.
//
// Index
//   [SECTION] words
//   [SECTION] head grid slide
//   [SECTION] timeline slide
#include "app/model_slides.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "engine/error.h"
#include "figure/tensor_figure.h"
#include "figure/text_metrics.h"
#include "model/ablate.h"
#include "model/tasks.h"

namespace attnsim::app {

namespace fig = attnsim::figure;
namespace fs = std::filesystem;

// [SECTION] words ----------------------------------------------------------------------------

namespace {

const char* T(lessons::Lang lang, const char* ko, const char* en) { return lang == lessons::Lang::Ko ? ko : en; }

// The lessons' words for the roles (lesson 11 says 유도 헤드 / 바로 앞 토큰 헤드).
std::string role_word(const std::string& role, lessons::Lang lang) {
  static const std::map<std::string, std::string> ko = {
      {"induction", "유도"},     {"previous-token", "앞 토큰"}, {"duplicate-token", "중복 토큰"},
      {"first-token", "첫 토큰"}, {"diagonal", "대각선"},       {"mixed", "혼합"}};
  if (lang == lessons::Lang::En) return role;
  const auto it = ko.find(role);
  return it == ko.end() ? role : it->second;
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

AblationNumbers ablation_numbers(const ModelView& view) {
  AblationNumbers n;
  const model::Model& m = view.model();
  const model::Batch batch = model::ablation_batch(m.config);
  n.trained = model::cross_entropy(model::forward(m, batch).logits, batch);
  n.has_ablation = !view.ablated_heads().empty();
  if (n.has_ablation) {
    model::Ablation ab;
    ab.heads = view.ablated_heads();  // zero ablation: what model.* with `ablate` measures
    n.ablated = model::cross_entropy(model::forward(m, batch, &ab).logits, batch);
  }
  return n;
}

namespace {

// One model's layers x heads grid inside `area`: the label column "L0", a badge row over each
// cell, the knocked-out heads dimmed, framed and crossed (the first Line of each cross goes
// to `crosses`). Returns each head's heatmap rectangle (layer * heads + head).
std::vector<fig::Rect> add_head_grid(fig::Figure& f, const fig::Theme& th, const fig::Rect& area, const ModelView& view,
                                     lessons::Lang lang, std::vector<size_t>& crosses) {
  std::vector<fig::Rect> cells;
  const int64_t layers = view.model().config.layers, heads = view.model().config.heads;
  const float gap = heads > 4 ? 12 : 24, label_h = 40, label_w = 80;
  const float cell = std::max(8.0f, std::min((area.w - label_w - gap * static_cast<float>(heads - 1)) / static_cast<float>(heads),
                                             (area.h - static_cast<float>(layers) * (label_h + gap)) / static_cast<float>(layers)));
  const model::HeadTable& roles = view.roles();
  for (int64_t l = 0; l < layers; ++l) {
    const Step* alpha = view.shown().traces[static_cast<size_t>(l)].find("alpha");
    if (!alpha || !alpha->out.defined()) throw Error("layer " + std::to_string(l) + " has no alpha");
    const auto blocks = fig::tensor_blocks("alpha", alpha->out, 0);
    const float y = area.y + static_cast<float>(l) * (cell + label_h + gap) + label_h;
    f.text(area.x, y + cell / 2, T(lang, "층 ", "L") + std::to_string(l), fig::kLabelMin, th.muted, fig::Anchor::Start,
           true, "label");
    for (int64_t h = 0; h < heads && h < static_cast<int64_t>(blocks.size()); ++h) {
      const float x = area.x + label_w + static_cast<float>(h) * (cell + gap);
      const fig::Rect r{x, y, cell, cell};
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
      // Badge: "1.0 induction 0.79" on the role's colour, cut to the cell's width.
      const model::HeadScores& sc = roles.at(l, h);
      const std::string role = model::role_label(sc);
      std::string badge = head_name(l, h) + " " + role_word(role, lang);
      char score[16];
      std::snprintf(score, sizeof score, " %.2f", model::role_score(sc, role));
      if (role != "mixed" && fig::text_width(badge + score, fig::kLabelMin) <= cell - 12) badge += score;
      badge = fig::fit_text(badge, fig::kLabelMin, cell - 12);
      f.box({x, y - label_h + 2, std::min(cell, fig::text_width(badge, fig::kLabelMin) + 12), label_h - 6}, role_color(role));
      f.text(x + 6, y - label_h / 2 - 1, badge, fig::kLabelMin, fig::rgb(0x101010), fig::Anchor::Start, false, "label");
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

fig::Slide grid_slide_frame(const ModelSlideText& text, const fig::Theme& th) {
  fig::SlideSpec spec;
  spec.title = text.title;
  spec.caption = text.caption;
  spec.footer = text.footer;
  spec.legend.map = fig::ColorMapId::Viridis;
  spec.legend.lo = 0;
  spec.legend.hi = 1;
  spec.legend.what = T(text.lang, "alpha (어텐션 가중치)", "alpha (attention weight)");
  return fig::make_slide(spec, th);
}

// Loss (nats) and top-1 accuracy on the first copy and the repeated part, one bar per run,
// stacked in `charts`.
void add_part_bars(fig::Figure& f, const fig::Theme& th, const fig::Rect& charts, lessons::Lang lang,
                   const std::vector<std::pair<std::string, fig::Color>>& bars, const std::vector<model::LossStats>& runs,
                   fig::BarLayout& loss_out, fig::BarLayout& acc_out) {
  auto values = [&](auto get) {
    std::vector<double> v;
    for (const model::LossStats& r : runs) v.push_back(get(r));
    return v;
  };
  const char* first_name = T(lang, "첫 사본", "first copy");
  const char* repeat_name = T(lang, "반복 구간", "repeated part");
  fig::BarChart loss;
  loss.title = T(lang, "손실 (nats, 평가 배치)", "loss (nats, evaluation batch)");
  loss.bars = bars;
  loss.groups = {{first_name, values([](const model::LossStats& s) { return s.parts[model::kFirst].loss(); })},
                 {repeat_name, values([](const model::LossStats& s) { return s.parts[model::kRepeat].loss(); })}};
  double hi = 0;
  for (const auto& g : loss.groups)
    for (double v : g.values) hi = std::max(hi, v);
  loss.y_hi = std::max(1.0, hi * 1.1);
  loss.legend = false;  // the accuracy chart under it has the same bars and says it
  fig::BarChart acc;
  acc.title = T(lang, "정확도 (top-1)", "accuracy (top-1)");
  acc.bars = bars;
  acc.groups = {{first_name, values([](const model::LossStats& s) { return s.parts[model::kFirst].accuracy(); })},
                {repeat_name, values([](const model::LossStats& s) { return s.parts[model::kRepeat].accuracy(); })}};
  acc.y_hi = 1;
  acc.decimals = 1;
  acc.value_scale = 100;
  acc.suffix = " %";
  const float half = (charts.h - 30) / 2;
  loss_out = fig::add_bar_chart(f, th, {charts.x, charts.y, charts.w, half}, loss);
  acc_out = fig::add_bar_chart(f, th, {charts.x, charts.y + half + 30, charts.w, half}, acc);
}

}  // namespace

HeadGridSlide head_grid_slide(const ModelView& view, const ModelSlideText& text) {
  if (!view.loaded()) throw Error("no model loaded");
  const fig::Theme& th = fig::theme_by_name(text.theme);
  const lessons::Lang lang = text.lang;
  HeadGridSlide out;
  out.numbers = ablation_numbers(view);
  fig::Slide s = grid_slide_frame(text, th);
  // Left: the grid (62 % of the width); right: the two bar charts.
  const fig::Rect grid_area{s.visual.x, s.visual.y, s.visual.w * 0.62f, s.visual.h};
  const fig::Rect charts{grid_area.right() + 40, s.visual.y, s.visual.right() - grid_area.right() - 40, s.visual.h};
  out.cells = add_head_grid(s.figure, th, grid_area, view, lang, out.cross_items);

  const AblationNumbers& n = out.numbers;
  const size_t knocked = view.ablated_heads().size();
  std::vector<std::pair<std::string, fig::Color>> bars = {{T(lang, "학습된 그대로", "as trained"), kTrained}};
  std::vector<model::LossStats> runs = {n.trained};
  if (n.has_ablation) {
    bars.emplace_back(std::to_string(knocked) + T(lang, "개 헤드 제거", knocked == 1 ? " head knocked out" : " heads knocked out"),
                      kKnocked);
    runs.push_back(n.ablated);
  }
  add_part_bars(s.figure, th, charts, lang, bars, runs, out.loss, out.accuracy);
  out.figure = std::move(s.figure);
  return out;
}

CompareSlide compare_slide(const std::vector<std::pair<std::string, const ModelView*>>& models, const ModelSlideText& text) {
  if (models.empty()) throw Error("no model to compare");
  const fig::Theme& th = fig::theme_by_name(text.theme);
  const lessons::Lang lang = text.lang;
  CompareSlide out;
  fig::Slide s = grid_slide_frame(text, th);
  const fig::Rect grid_area{s.visual.x, s.visual.y, s.visual.w * 0.62f, s.visual.h};
  const fig::Rect charts{grid_area.right() + 40, s.visual.y, s.visual.right() - grid_area.right() - 40, s.visual.h};
  // One band per model: its name, then its grid.
  const float band = (grid_area.h - 16 * static_cast<float>(models.size() - 1)) / static_cast<float>(models.size());
  static const unsigned colours[] = {0x3B75AF, 0xE69F00, 0x009E73, 0xCC79A7};  // Okabe-Ito: apart for CVD
  std::vector<std::pair<std::string, fig::Color>> bars;
  for (size_t i = 0; i < models.size(); ++i) {
    const auto& [name, view] = models[i];
    if (!view || !view->loaded()) throw Error("no model loaded");
    const float y = grid_area.y + static_cast<float>(i) * (band + 16);
    const int64_t h = view->model().config.heads;
    const std::string label = name + " · " + std::to_string(h) + T(lang, "개 헤드", h == 1 ? " head" : " heads");
    s.figure.text(grid_area.x, y + 18, fig::fit_text(label, fig::kLabelMin, grid_area.w, true), fig::kLabelMin, th.text,
                  fig::Anchor::Start, true, "label");
    std::vector<size_t> crosses;
    out.cells.push_back(add_head_grid(s.figure, th, {grid_area.x, y + 44, grid_area.w, band - 44}, *view, lang, crosses));
    const model::Batch batch = model::ablation_batch(view->model().config);
    out.stats.push_back(model::cross_entropy(model::forward(view->model(), batch).logits, batch));
    bars.emplace_back(name, fig::rgb(colours[i % 4]));
  }
  add_part_bars(s.figure, th, charts, lang, bars, out.stats, out.loss, out.accuracy);
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

TimelineSlide timeline_slide(const std::string& checkpoint_dir, int64_t shown_step, const ModelSlideText& text) {
  const fig::Theme& th = fig::theme_by_name(text.theme);
  const lessons::Lang lang = text.lang;
  TimelineSlide out;
  out.timeline = read_train_log((fs::path(run_of_checkpoint(checkpoint_dir)) / "train_log.jsonl").string());
  const Timeline& tl = out.timeline;
  if (tl.points.empty()) throw Error(checkpoint_dir + ": the training log is empty");
  out.phase_step = tl.phase_change_step();
  out.shown_step = shown_step;

  fig::SlideSpec spec;
  spec.title = text.title;
  spec.caption = text.caption;
  spec.footer = text.footer;
  spec.has_legend = false;
  fig::Slide s = fig::make_slide(spec, th);
  fig::Figure& f = s.figure;

  const double x_hi = static_cast<double>(std::max<int64_t>(1, tl.points.back().step));
  std::vector<fig::Marker> markers;
  if (out.phase_step >= 0)
    markers.push_back({static_cast<double>(out.phase_step), T(lang, "상전이", "phase change"), fig::rgb(0xD55E00), false});
  if (shown_step >= 0)
    markers.push_back({static_cast<double>(shown_step), T(lang, "이 단계", "this step"), th.text, true});
  const char* step_word = T(lang, "단계", "step");

  // 2 x 2: the loss per part, then one role score per plot.
  const float gx = 48, gy = 24;
  const float w = (s.visual.w - gx) / 2, h = (s.visual.h - gy) / 2;
  auto area = [&](int i) {
    return fig::Rect{s.visual.x + static_cast<float>(i % 2) * (w + gx), s.visual.y + static_cast<float>(i / 2) * (h + gy), w, h};
  };
  {
    fig::LinePlot p;
    p.title = T(lang, "부분별 손실 (nats)", "loss per part (nats)");
    p.x_hi = x_hi;
    p.x_unit = step_word;
    fig::Series first{T(lang, "첫 사본", "first copy"), fig::rgb(0x3B75AF), {}, 4};
    fig::Series repeat{T(lang, "반복 구간", "repeated part"), fig::rgb(0xE69F00), {}, 4};
    double hi = 0;
    for (const TimelinePoint& q : tl.points) {
      if (q.loss_first >= 0) first.points.emplace_back(static_cast<double>(q.step), q.loss_first);
      if (q.loss_repeat >= 0) repeat.points.emplace_back(static_cast<double>(q.step), q.loss_repeat);
      hi = std::max({hi, q.loss_first, q.loss_repeat});
    }
    p.y_hi = std::max(1.0, std::ceil(hi));
    p.series = {first, repeat};
    p.markers = markers;
    out.plots.push_back(fig::add_line_plot(f, th, area(0), p));
  }
  struct Role {
    const char *ko, *en;
    double model::HeadScores::*field;
  };
  const Role role_plots[3] = {{"헤드별 유도 점수", "induction score per head", &model::HeadScores::induction},
                              {"헤드별 앞 토큰 점수", "previous-token score per head", &model::HeadScores::previous},
                              {"헤드별 첫 토큰 비중", "first-token share per head", &model::HeadScores::first}};
  for (int i = 0; i < 3; ++i) {
    fig::LinePlot p;
    p.title = T(lang, role_plots[i].ko, role_plots[i].en);
    p.x_hi = x_hi;
    p.x_unit = step_word;
    for (int64_t l = 0; l < tl.layers; ++l)
      for (int64_t hd = 0; hd < tl.heads; ++hd) {
        // Layer 0 in blues, layer 1 in oranges, ...: one hue family per layer.
        static const unsigned families[4][2] = {{0x1F4E89, 0x74B3E8}, {0xA33A00, 0xF5B041}, {0x2E7D32, 0xA5D6A7},
                                                {0x6A1B9A, 0xCE93D8}};
        const auto& fam = families[l % 4];
        const float t = tl.heads > 1 ? static_cast<float>(hd) / static_cast<float>(tl.heads - 1) : 0;
        const fig::Color a = fig::rgb(fam[0]), b = fig::rgb(fam[1]);
        // One legend entry per layer (its first head); the shades tell its heads apart.
        fig::Series sr{hd == 0 ? std::string(T(lang, "층 ", "layer ")) + std::to_string(l) + T(lang, " 헤드", " heads") : "",
                       {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t, 1},
                       {},
                       3};
        for (const TimelinePoint& q : tl.points)
          if (q.scored && q.scores.layers == tl.layers && q.scores.heads == tl.heads)
            sr.points.emplace_back(static_cast<double>(q.step), q.scores.at(l, hd).*(role_plots[i].field));
        p.series.push_back(std::move(sr));
      }
    p.markers = markers;
    out.plots.push_back(fig::add_line_plot(f, th, area(i + 1), p));
  }
  out.figure = std::move(s.figure);
  return out;
}

}  // namespace attnsim::app
