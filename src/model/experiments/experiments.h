// The article's claims about heads, as experiments on the toy model. Each returns a table,
// a JSON object and a one-line conclusion computed from the numbers (the toy model's own
// answer, which may disagree with the article):
//   roles     (a) head-role scores before vs after training: roles appear unasked
//   ablation  (b) each head knocked out alone: how many are nearly free, how many critical
//   prune     (c) prune-after (train 8 heads, keep the k that matter) vs train-few (k heads)
//   dk-sweep  (d) h = 1 .. d/4 at fixed d_model: mean row entropy and final loss
//   one-vs-many (e) h = 1 vs h = 8 at equal parameter count (the original paper's ablation)
//   sink      (f) first-token share per head
//   streaming (issue 11) teacher-forced decode under full / window / sink+window caches:
//             does evicting the first token hurt, and does keeping it fix that
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/training/heads.h"
#include "model/training/train.h"

namespace attnsim::model {

struct ExperimentOptions {
  ModelConfig base;                 // sizes of every model trained (heads varied where needed)
  TrainOptions train;               // steps, batch, lr, task
  std::string model_dir;            // (a) (b) (f): use this checkpoint instead of training one
  std::function<void(const std::string&)> progress;  // "training h=4 (2/5)"
};

// The one-line conclusion as a sentence pattern and its values, so a front end can show it
// in another language with the same computed numbers: text() is the English line; the app
// looks `format` up in its table (the Korean pattern keeps the same "%s" in the same order)
// and fills in the same values. Every pattern run_experiment can return is in
// conclusion_formats() (the app's translation test walks it).
struct Conclusion {
  std::string format;               // English; one "%s" per value, "%%" for a percent sign
  std::vector<std::string> values;  // formatted here: "3", "0.42", "window(16)"
  std::string text() const;
};
// `format` with each "%s" replaced by the next value and "%%" by "%". Throws Error when the
// counts differ or the format has another conversion.
std::string fill_format(const std::string& format, const std::vector<std::string>& values);
const std::vector<std::string>& conclusion_formats();
// The patterns the Hugging Face experiments (hf_experiments.h) share with the toy model's,
// and the one of their own (roles without a "before": a pretrained model has no initial
// weights on disk).
namespace conclusions {
extern const char* const kAblationCounts;
extern const char* const kRolesOnRepeats;
}  // namespace conclusions

struct ExperimentResult {
  std::string name;
  std::string table;       // plain text, aligned
  Conclusion conclusion;   // one line
  nlohmann::json json;
};

extern const std::vector<std::string> kExperimentNames;  // roles ... sink streaming
// The experiments that read options.model_dir; the others train their own models and refuse
// it (check_experiment).
bool uses_model_dir(const std::string& name);
// Everything run_experiment would refuse, before it computes anything: the name, a model_dir
// given to an experiment that trains its own, the base config and the training recipe (the
// ranges of adamw.h), d_model % 8 for prune. Then the memory: the largest training step among
// the models the experiment trains (or the checkpoint's header, with model_dir), plus a second
// model held beside it and an evaluation forward, against `mem_limit` (0: the default).
void check_experiment(const std::string& name, const ExperimentOptions& options, int64_t mem_limit);
ExperimentResult run_experiment(const std::string& name, const ExperimentOptions& options);

// Thresholds for (b): a head is nearly free when knocking it out costs < 0.05 nats on the
// repeat and < 2 accuracy points; critical when it costs > 20 points.
inline constexpr double kFreeLoss = 0.05, kFreePoints = 2.0, kCriticalPoints = 20.0;

// What the toy model's and a Hugging Face model's experiments share: (b)'s row for one head
// knocked out (its verdict by the thresholds above, counted into free_heads / critical), and
// (f)'s whole result from a head table.
void add_ablation_row(ExperimentResult& result, HeadRef head, double delta_loss, double delta_points,
                      int& free_heads, int& critical);
ExperimentResult sink_result(const HeadTable& table);

}  // namespace attnsim::model
