// The engine figures a lesson step states (cost model, IO model, tiled runs): what the
// lesson's Figures panel lists and what the step's cost slide draws (one list, two views).
//
//   step_figures(step, base, eval)    every cost.* / flash.* / flashrun.* claim of the step,
//                                     evaluated by the engine under the step's settings
//   figure_label(quantity, lang)      a reader's name for it ("score tensor, one layer")
#pragma once

#include <string>
#include <vector>

#include "lessons/lesson.h"
#include "lessons/quantity.h"

namespace attnsim::app {

struct StepFigure {
  std::string quantity;  // "cost.score_bytes_layer"
  std::string sizes;     // "d=512 h=8 T=4096" (the claim's own sizes)
  std::string value;     // "536,870,912 B (512 MiB, 537 MB)", or the engine's refusal
};

bool is_figure_quantity(const std::string& quantity);
std::vector<StepFigure> step_figures(const lessons::LessonStep& step, const lessons::Settings& base,
                                     lessons::Evaluator& eval);
// A step's claims over trained runs (model.runs_min / runs_median / runs_max), one row per
// recipe and field: "recall-d64-h8-kv1-8k", "3 seeds · recall accuracy", "min 40.2 % · median
// 81.3 % · max 93.0 %". The cost slide of a step that states these and no cost figure.
std::vector<StepFigure> run_figures(const lessons::LessonStep& step, const lessons::Settings& base,
                                    lessons::Evaluator& eval, lessons::Lang lang);
// A value as the panel and the slides print it: bytes as "536,870,912 B (512 MiB, 537 MB)",
// whole numbers with thousands separators, the rest as lessons::format_value.
std::string format_figure(const std::string& quantity, const lessons::Value& value);
// The quantity's code name when it has no reader's name.
const char* figure_label(const std::string& quantity, lessons::Lang lang);

}  // namespace attnsim::app
