// Experiment results as figures. See experiment_figure.h.
#include "views/experiment_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/error.h"
#include "figure/plot.h"
#include "figure/slide.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

namespace {

// Blue and vermillion stay apart with deuteranopia (Okabe & Ito); green and purple after them.
const fig::Color kBlue = fig::rgb(0x0072B2), kVermillion = fig::rgb(0xD55E00), kGreen = fig::rgb(0x009E73),
                 kPurple = fig::rgb(0xCC79A7);

double num(const nlohmann::json& e, const char* key) {
  if (!e.contains(key) || !e[key].is_number()) throw Error(std::string("experiment result: no number '") + key + "'");
  return e[key].get<double>();
}

std::string head_name(const nlohmann::json& e) {
  return std::to_string(e.value("layer", 0)) + "." + std::to_string(e.value("head", 0));
}

// The axis around the values, with room for the value texts: 0 always on it.
void fit_axis(fig::BarChart& c) {
  double lo = 0, hi = 0;
  for (const auto& g : c.groups)
    for (double v : g.values)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (hi - lo < 1e-12) hi = 1;
  c.y_lo = lo * 1.12;
  c.y_hi = hi * 1.12;
}

fig::BarChart chart(const std::string& title, std::vector<std::pair<std::string, fig::Color>> bars, int decimals,
                    double scale = 1, const std::string& suffix = "") {
  fig::BarChart c;
  c.title = title;
  c.bars = std::move(bars);
  c.decimals = decimals;
  c.value_scale = scale;
  c.suffix = suffix;
  return c;
}

// One chart per area, left to right.
void place(fig::Figure& f, const fig::Theme& th, const fig::Rect& area, std::vector<fig::BarChart> charts) {
  const float gap = 60, w = (area.w - gap * static_cast<float>(charts.size() - 1)) / static_cast<float>(charts.size());
  for (size_t i = 0; i < charts.size(); ++i) {
    fit_axis(charts[i]);
    fig::add_bar_chart(f, th, {area.x + (w + gap) * static_cast<float>(i), area.y, w, area.h}, charts[i]);
  }
}

}  // namespace

model::ExperimentOptions experiment_options(const model::ModelConfig& checkpoint, const std::string& model_dir,
                                            int steps) {
  model::ExperimentOptions o;
  o.base = checkpoint;
  o.base.seed = 1;
  o.train.steps = steps;
  o.train.adamw.lr = 2e-3f;
  o.model_dir = model_dir;
  return o;
}

void add_experiment_charts(fig::Figure& f, const fig::Theme& th, const fig::Rect& area, const model::ExperimentResult& r,
                           Lang lang) {
  const nlohmann::json& j = r.json;
  if (!j.is_array() || j.empty()) throw Error("experiment '" + r.name + "': the result has no rows");
  if (r.name == "ablation") {
    auto c = chart(tr_in(lang, "repeat accuracy change when the head is knocked out (points)"), {{tr_in(lang, "Δ accuracy"), kVermillion}}, 1);
    for (const auto& e : j) c.groups.push_back({head_name(e), {num(e, "delta_accuracy_points")}});
    c.legend = false;
    place(f, th, area, {c});
  } else if (r.name == "dk-sweep") {
    auto a = chart(tr_in(lang, "mean attention row entropy (nats)"), {{tr_in(lang, "entropy"), kBlue}}, 2);
    auto b = chart(tr_in(lang, "final loss"), {{tr_in(lang, "loss"), kVermillion}}, 2);
    for (const auto& e : j) {
      const std::string h = "h=" + std::to_string(e.value("heads", 0));
      a.groups.push_back({h, {num(e, "entropy")}});
      b.groups.push_back({h, {num(e, "loss")}});
    }
    a.legend = b.legend = false;
    place(f, th, area, {a, b});
  } else if (r.name == "prune") {
    auto c = chart(tr_in(lang, "repeat accuracy"), {{tr_in(lang, "prune after training 8"), kBlue}, {tr_in(lang, "train with few"), kVermillion}}, 1, 100,
                   " %");
    for (const auto& e : j) {
      if (!e.contains("prune_after") || !e.contains("train_few")) throw Error("experiment 'prune': a row lacks its runs");
      char name[64];
      const int heads = e.value("heads", 0);
      std::snprintf(name, sizeof name, heads == 1 ? tr_in(lang, "%d head") : tr_in(lang, "%d heads"), heads);
      c.groups.push_back({name, {num(e["prune_after"], "accuracy"), num(e["train_few"], "accuracy")}});
    }
    place(f, th, area, {c});
  } else if (r.name == "one-vs-many") {
    auto a = chart(tr_in(lang, "repeat loss"), {{tr_in(lang, "loss"), kVermillion}}, 3);
    auto b = chart(tr_in(lang, "repeat accuracy"), {{tr_in(lang, "accuracy"), kBlue}}, 1, 100, " %");
    for (const auto& e : j) {
      const std::string h = "h=" + std::to_string(e.value("heads", 0));
      a.groups.push_back({h, {num(e, "loss_repeat")}});
      b.groups.push_back({h, {num(e, "accuracy")}});
    }
    a.legend = b.legend = false;
    place(f, th, area, {a, b});
  } else if (r.name == "roles") {
    auto c = chart(tr_in(lang, "induction score per head"), {{tr_in(lang, "before training"), kBlue}, {tr_in(lang, "after"), kVermillion}}, 2);
    for (const auto& e : j) {
      if (!e.contains("induction") || !e["induction"].is_array() || e["induction"].size() != 2)
        throw Error("experiment 'roles': a row lacks its induction scores");
      c.groups.push_back({head_name(e), {e["induction"][0].get<double>(), e["induction"][1].get<double>()}});
    }
    place(f, th, area, {c});
  } else if (r.name == "sink") {
    auto c = chart(tr_in(lang, "first-token share per head"), {{tr_in(lang, "first-token share"), kBlue}}, 0, 100, " %");
    for (const auto& e : j) c.groups.push_back({head_name(e), {num(e, "first")}});
    c.legend = false;
    place(f, th, area, {c});
  } else if (r.name == "streaming") {
    fig::LinePlot p;
    p.title = tr_in(lang, "next-token loss by position (nats)");
    p.x_unit = tr_in(lang, "position");
    const fig::Color colours[] = {kBlue, kVermillion, kGreen, kPurple};
    double hi = 0, last = 1;
    for (size_t i = 0; i < j.size(); ++i) {
      const auto& e = j[i];
      if (!e.contains("loss_by_position") || !e["loss_by_position"].is_array())
        throw Error("experiment 'streaming': a row lacks its loss by position");
      fig::Series s{e.value("policy", std::string("?")), colours[i % 4], {}, 3};
      const auto& loss = e["loss_by_position"];
      for (size_t t = 0; t < loss.size(); ++t) {
        const double v = loss[t].get<double>();
        s.points.emplace_back(static_cast<double>(t), v);
        if (std::isfinite(v)) hi = std::max(hi, v);
      }
      last = std::max(last, static_cast<double>(loss.size()) - 1);
      p.series.push_back(std::move(s));
    }
    p.x_hi = last;
    p.y_hi = hi > 0 ? hi * 1.05 : 1;
    fig::add_line_plot(f, th, area, p);
  } else {
    throw Error("experiment '" + r.name + "': no chart for it");
  }
}

std::string experiment_conclusion(const model::ExperimentResult& r, Lang lang) {
  return model::fill_format(tr_in(lang, r.conclusion.format.c_str()), r.conclusion.values);
}

fig::Figure experiment_view(const model::ExperimentResult& r, Lang lang, const std::string& theme, float width) {
  const fig::Theme& th = fig::theme_by_name(theme);
  fig::Figure f;
  f.theme = th.name;
  f.background = th.background;
  f.width = width;
  float y = 24;
  for (const auto& line : fig::wrap_text(experiment_conclusion(r, lang), fig::kLabelMin, width - 16, 3)) {
    f.text(8, y, line, fig::kLabelMin, th.accent, fig::Anchor::Start, false, "label");
    y += 40;
  }
  f.height = y + 520;
  add_experiment_charts(f, th, {8, y + 10, width - 16, 500}, r, lang);
  return f;
}

fig::Figure experiment_slide(const model::ExperimentResult& r, Lang lang, const std::string& theme) {
  const fig::Theme& th = fig::theme_by_name(theme);
  fig::SlideSpec spec;
  spec.title = std::string(tr_in(lang, "experiment")) + ": " + tr_in(lang, r.name.c_str());
  spec.caption = experiment_conclusion(r, lang);
  spec.footer = "attnsim · attnsim-cli experiment " + r.name;
  spec.has_legend = false;
  fig::Slide s = fig::make_slide(spec, th);
  add_experiment_charts(s.figure, th, s.visual, r, lang);
  s.figure.title = spec.title;
  s.figure.kind = "experiment";
  return s.figure;
}

}  // namespace attnsim::app
