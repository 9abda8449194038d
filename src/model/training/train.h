// Training: batches from the task, forward, loss, backward, AdamW, with a JSON-lines log,
// checkpoints every N steps and an evaluation on held-out repeat lengths.
//
// Deterministic: batch k of a run depends only on (data_seed, k); with the same seed and
// the same OpenBLAS thread count two runs give the same bits.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/training/adamw.h"
#include "model/training/heads.h"
#include "model/training/backward.h"
#include "model/training/tasks.h"
#include "model/training/text_task.h"

namespace attnsim::model {

struct TrainOptions {
  TaskSpec task;
  int64_t batch = 32;
  int64_t steps = 3000;
  AdamWConfig adamw;
  uint64_t data_seed = 1;
  int64_t log_every = 50;          // a log line (loss, lr, grad norm) every N steps
  int64_t score_every = 250;       // head-role scores in the log every N steps (0 = never)
  int64_t checkpoint_every = 0;    // DIR/checkpoints/step-NNNNNN every N steps (0 = never)
  std::string out_dir;             // "" = keep nothing on disk
  int64_t mem_limit = 0;           // bytes; 0 = 75 % of physical memory
  // The text task's held-out split: at each scored step, its loss and in-context-learning
  // score (text_task.h), and the head-role scores on its windows and on its lines repeated
  std::shared_ptr<const TextStream> heldout;
};

// train(): one training step (predict_training_bytes) plus the head scoring forward that runs
// inside a step when options.score_every > 0. Saturates instead of wrapping.
int64_t predict_train_bytes(const ModelConfig& config, const TrainOptions& options);

// One log line's content; also what a progress callback sees.
struct StepReport {
  int64_t step = 0;                // steps done
  double loss = 0;                 // this step's training batch
  std::vector<double> part_loss;   // per Part (tasks.h)
  double lr = 0, grad_norm = 0;
  double seconds = 0;              // since the start
  bool scored = false;
  HeadTable scores;                // when scored (text task: on held-out windows)
  // text task, when scored: held-out evaluation, roles on repeated held-out lines, and a
  // hash of every parameter's bits, which retrain-check compares
  std::optional<TextEval> heldout;
  HeadTable repeated_scores;
  uint64_t params_hash = 0;
};

struct TrainHooks {
  std::function<void(const StepReport&)> on_step;  // every step
  std::function<bool()> stop;                      // polled each step: true ends the run early
};

// A run one step at a time, for callers that cannot block until it ends (the browser build
// trains between frames). train() below is `while (run.step()) {}`.
class TrainRun {
 public:
  // Checks the options and the memory, as train() does (throws Error before allocating).
  TrainRun(Model& model, const TrainOptions& options, const TrainHooks& hooks = {});
  // One optimiser step with its log line, hooks and checkpoint; false once the run is over
  // (all steps taken, or hooks.stop said so), after writing the final model. Throws Error
  // on a non-finite loss, as train() does.
  bool step();
  const std::vector<nlohmann::json>& log() const { return log_; }
  int64_t steps_taken() const { return step_; }

 private:
  void save(const std::string& dir, int64_t step) const;
  void finish();
  Model& model_;
  TrainOptions o_;
  TrainHooks hooks_;
  AdamWConfig adamw_;
  std::optional<AdamW> opt_;
  Batch score_batch_;
  Batch heldout_windows_, repeated_batch_;  // text task
  std::vector<nlohmann::json> log_;
  std::chrono::steady_clock::time_point t0_;
  int64_t step_ = 0;
  bool finished_ = false;
};

// Trains `model` in place. Throws Error before allocating when the run would not fit, and on
// a non-finite loss: "step N: loss is nan; first non-finite tensor: layers.1.attn.alpha",
// writing no checkpoint after the poisoned step. Returns the log (one JSON object per line).
std::vector<nlohmann::json> train(Model& model, const TrainOptions& options, const TrainHooks& hooks = {});

// Held-out evaluation: accuracy and loss on the predictable part of BOS, r r, r' r', ...
// with every segment of one length, for each length in `repeats` (e.g. lengths never seen
// in training).
struct RepeatEval {
  int64_t repeat = 0;
  double accuracy = 0, loss_repeat = 0, loss_first = 0;
  int64_t predictable = 0;  // predictable targets scored (all sequences together)
};
std::vector<RepeatEval> evaluate_repeats(const Model& model, const std::vector<int64_t>& repeats,
                                         int64_t sequences = 256, uint64_t seed = 777);
// Accuracy over all of them together, per token: every predictable target counts once (a
// length with more predictable targets per sequence weighs more).
double pooled_accuracy(const std::vector<RepeatEval>& evals);

// Loss and accuracy per part on `sequences` fresh sequences of the task, at a batch index no
// run reaches (training uses 0..steps-1 < 2^32), so they are held out; seed 0 for every run, so
// runs of one recipe are scored on the same sequences: for recall and gist, scored by part.
// (256: what predict_report_bytes counts for evaluate_repeats' batch.)
LossStats evaluate_task(const Model& model, const TaskSpec& task, int64_t sequences = 256);

// FNV-1a over every parameter's bytes, in param_specs order: equal runs give equal hashes.
uint64_t params_hash(const Params& params);

// The task a checkpoint was trained on (tasks; induction's lengths, recall / gist's pairs), read
// back from its model.json "train" entry; nullopt when the entry is missing or not the shape
// train() writes. vocab and len are the model's (its config), not set here.
std::optional<TaskSpec> recipe_task(const nlohmann::json& meta);
// A text recipe's "text" entry (the corpus files' and tokenizer's names and sha256) is left
// in the json for the caller, which loads and checks the corpus; the spec's text stays null.
// The whole recipe (task, batch, steps, data_seed, AdamW lr / warmup / weight_decay / clip)
// for continuing a checkpoint's training; nullopt as recipe_task(), or when a number is
// missing or has the wrong type. Throws Error when a number is out of the range train()
// accepts (lr -1, adamw.h). The task's vocab and len are left for the caller to set.
std::optional<TrainOptions> recipe_options(const nlohmann::json& meta);

nlohmann::json scores_json(const HeadTable& table);

}  // namespace attnsim::model
