// The engine figures a lesson step states. See lesson_figures.h.
#include "views/lesson_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include "engine/cost.h"
#include "engine/error.h"

namespace attnsim::app {

std::string format_figure(const std::string& quantity, const lessons::Value& v) {
  if (const double* d = std::get_if<double>(&v)) {
    if (quantity.find("bytes") != std::string::npos && *d == std::floor(*d))
      return format_bytes(static_cast<int64_t>(*d));
    if (*d == std::floor(*d) && std::fabs(*d) < 9e15) return format_count(static_cast<int64_t>(*d));
    if (std::isfinite(*d)) {  // a ratio or a share: four significant digits read on a slide (7.647)
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4g", *d);
      return buf;
    }
  }
  return lessons::format_value(v);
}

namespace {

std::string describe_sizes(const lessons::Claim& c) {
  std::string s;
  auto add = [&](const char* name, const std::optional<int64_t>& v) {
    if (v) s += (s.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(*v);
  };
  if (c.quantity.rfind("cost.", 0) == 0) {
    add("d", c.cost.d_model);
    add("h", c.cost.heads);
    add("d_k", c.cost.head_dim);
    add("g", c.cost.kv_heads);
    add("L", c.cost.layers);
    add("B", c.cost.batch);
    add("T", c.cost.seq);
    if (c.cost.dtype) s += " " + *c.cost.dtype;
  } else if (c.quantity.rfind("flash.", 0) == 0) {
    add("B", c.flash.batch);
    add("h", c.flash.heads);
    add("T", c.flash.tq);
    add("d_k", c.flash.head_dim);
    add("Br", c.flash.block_q);
    add("Bc", c.flash.block_k);
  } else if (c.quantity.rfind("flashrun.", 0) == 0) {
    add("Br", c.flash.block_q);
    add("Bc", c.flash.block_k);
  }
  return s;
}

}  // namespace

// A reader's name for a quantity (the code name stays beside it).
const char* figure_label(const std::string& q, lessons::Lang lang) {
  static const std::map<std::string, std::pair<const char*, const char*>> names = {
      {"cost.params_no_bias", {"투영 넷의 파라미터 (편향 제외)", "parameters of the four projections (no biases)"}},
      {"cost.params_with_bias", {"투영 넷의 파라미터 (편향 포함)", "parameters of the four projections (with biases)"}},
      {"cost.param_bytes", {"파라미터 바이트", "parameter bytes"}},
      {"cost.score_elements", {"점수 텐서 원소 수, 층 하나", "score tensor elements, one layer"}},
      {"cost.score_bytes_layer", {"점수 텐서, 층 하나", "score tensor, one layer"}},
      {"cost.score_bytes_model", {"점수 텐서, 모든 층", "score tensor, all layers"}},
      {"cost.kv_cache_bytes", {"KV 캐시 (헤드 h개)", "KV cache (h heads)"}},
      {"cost.kv_cache_bytes_grouped", {"KV 캐시 (키·값 헤드 g개)", "KV cache (g key/value heads)"}},
      {"cost.qk_flops_layer", {"q·kᵀ 연산 (FLOP), 층 하나", "q·kᵀ FLOPs, one layer"}},
      {"cost.qk_madds_layer", {"q·kᵀ 곱셈-덧셈, 층 하나", "q·kᵀ multiply-adds, one layer"}},
      {"cost.projection_flops_layer", {"투영 연산 (FLOP), 층 하나", "projection FLOPs, one layer"}},
      {"cost.d_model", {"모델 폭 d_model", "model width d_model"}},
      {"cost.layers", {"층 수", "layers"}},
      {"cost.seq", {"길이 T", "length T"}},
      {"cost.batch", {"배치 B", "batch B"}},
      {"cost.dtype_bytes", {"원소당 바이트", "bytes per element"}},
      {"cost.head_dim", {"헤드당 차원 d_k", "width per head d_k"}},
      {"cost.heads", {"헤드 수", "heads"}},
      {"cost.kv_heads", {"키·값 헤드 수", "key/value heads"}},
      {"flash.standard_traffic", {"느린 메모리 이동, 표준 경로 (원소)", "slow-memory traffic, standard path (elements)"}},
      {"flash.tiled_traffic", {"느린 메모리 이동, 타일 경로 (원소)", "slow-memory traffic, tiled path (elements)"}},
      {"flash.tiled_writes", {"느린 메모리 쓰기, 타일 경로 (원소)", "slow-memory writes, tiled path (elements)"}},
      {"flash.traffic_ratio", {"이동량 비 (표준 / 타일)", "traffic ratio (standard / tiled)"}},
      {"flash.score_bytes", {"표준 경로의 S와 P (float32)", "S and P of the standard path (float32)"}},
      {"flash.fast_bytes", {"타일 하나의 작업 공간", "one tile's working set"}},
      {"flashrun.max_abs_diff", {"최대 |타일 - 표준|", "max |tiled - standard|"}},
      {"flashrun.tolerance", {"허용 오차", "tolerance"}},
      {"flashrun.within_tolerance", {"타일 경로 = 표준 경로 (허용 오차 안, 1 = 예)", "tiled = standard within tolerance (1 = yes)"}},
      {"flashrun.tiles_total", {"타일 수", "tiles"}},
      {"flashrun.tiles_skipped", {"건너뛴 타일 수", "tiles skipped"}},
      {"flashrun.nan_mismatches", {"NaN 위치 불일치", "NaN mismatches"}},
  };
  const auto it = names.find(q);
  if (it == names.end()) return q.c_str();
  return lang == lessons::Lang::Ko ? it->second.first : it->second.second;
}


bool is_figure_quantity(const std::string& q) {
  return q.rfind("cost.", 0) == 0 || q.rfind("flash.", 0) == 0 || q.rfind("flashrun.", 0) == 0;
}

std::vector<StepFigure> step_figures(const lessons::LessonStep& step, const lessons::Settings& base,
                                     lessons::Evaluator& eval) {
  std::vector<StepFigure> out;
  for (const auto& c : step.claims) {
    if (!is_figure_quantity(c.quantity)) continue;
    StepFigure f;
    f.quantity = c.quantity;
    f.sizes = describe_sizes(c);
    try {
      f.value = format_figure(c.quantity, eval.evaluate(c, base));
    } catch (const Error& e) {
      f.value = e.what();
    }
    out.push_back(f);
  }
  return out;
}

namespace {

// The recipe of a run list: the runs' common name without the seed ("recall-d64-h8-kv1-8k").
std::string recipe_of(const std::string& runs, int* count) {
  std::vector<std::string> names;
  for (size_t at = 0; at <= runs.size();) {
    const size_t comma = std::min(runs.find(',', at), runs.size());
    names.push_back(runs.substr(at, comma - at));
    at = comma + 1;
  }
  *count = static_cast<int>(names.size());
  std::string common = names.front();
  for (const std::string& n : names) {
    size_t k = 0;
    while (k < common.size() && k < n.size() && common[k] == n[k]) ++k;
    common.resize(k);
  }
  while (!common.empty() && (common.back() == '-' || common.back() == 's')) common.pop_back();
  return common.empty() ? names.front() : common;
}

}  // namespace

std::vector<StepFigure> run_figures(const lessons::LessonStep& step, const lessons::Settings& base,
                                    lessons::Evaluator& eval, lessons::Lang lang) {
  const bool ko = lang == lessons::Lang::Ko;
  struct Row {
    StepFigure figure;
    std::map<std::string, std::string> parts;  // "min" -> "40.2 %"
  };
  std::vector<Row> rows;
  std::map<std::string, size_t> index;  // runs + of -> row
  for (const auto& c : step.claims) {
    static const std::map<std::string, std::string> kParts = {
        {"model.runs_min", "min"}, {"model.runs_median", "median"}, {"model.runs_max", "max"}};
    const auto part = kParts.find(c.quantity);
    if (part == kParts.end() || !c.model.runs) continue;
    const std::string of = c.model.of.value_or("repeat_accuracy");
    const std::string key = *c.model.runs + "|" + of;
    if (!index.count(key)) {
      index[key] = rows.size();
      int seeds = 0;
      Row r;
      r.figure.quantity = recipe_of(*c.model.runs, &seeds);
      std::string field = of;
      for (char& ch : field)
        if (ch == '_') ch = ' ';
      r.figure.sizes = (ko ? "시드 " + std::to_string(seeds) + "개 · " : std::to_string(seeds) + " seeds · ") + field;
      rows.push_back(r);
    }
    Row& r = rows[index[key]];
    try {
      const lessons::Value v = eval.evaluate(c, base);
      const double* d = std::get_if<double>(&v);
      char buf[32];
      if (d && of.find("accuracy") != std::string::npos) std::snprintf(buf, sizeof buf, "%.1f %%", 100 * *d);
      else if (d) std::snprintf(buf, sizeof buf, "%.3g", *d);
      r.parts[part->second] = d ? std::string(buf) : lessons::format_value(v);
    } catch (const Error& e) {
      r.parts[part->second] = e.what();
    }
  }
  std::vector<StepFigure> out;
  for (Row& r : rows) {
    for (const auto& [p, word] : {std::pair{"min", "최소"}, std::pair{"median", "중앙값"}, std::pair{"max", "최대"}}) {
      const auto it = r.parts.find(p);
      if (it == r.parts.end()) continue;
      r.figure.value += (r.figure.value.empty() ? "" : " · ") + std::string(ko ? word : p) + " " + it->second;
    }
    out.push_back(r.figure);
  }
  return out;
}

}  // namespace attnsim::app
