// Training in the app: a run as a sliced task (model::TrainRun, tasks.h), and the
// timeline the app plots, live or read back from a run's train_log.jsonl. No OpenGL.
//
// The phase change: the scored interval over which the largest head's induction score rises
// the most (at least kPhaseJump); the marker sits at the end of that interval.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "model/training/heads.h"
#include "model/training/train.h"
#include "views/i18n.h"
#include "views/tasks.h"

namespace attnsim::app {

struct TimelinePoint {
  int64_t step = 0;
  double loss = 0;
  double loss_first = -1, loss_repeat = -1;  // -1: no target of that part in the batch
  double heldout = -1;                       // a language model's held-out loss at scored steps; -1: none
  double seconds = 0;
  bool scored = false;
  model::HeadTable scores;  // when scored: induction, previous, first, ... per head
};

struct Timeline {
  std::vector<TimelinePoint> points;
  int64_t layers = 0, heads = 0;
  // Step of the phase change (see above), or -1 when the induction score never jumps.
  int64_t phase_change_step() const;
};
inline constexpr double kPhaseJump = 0.2;

// The largest induction score of any head (0 for an empty table): the curve the phase change
// is read from, and the one a group of runs is compared on (run_group.h).
double best_induction(const model::HeadTable& scores);

// Reads a run's train_log.jsonl; throws Error naming the file and line.
Timeline read_train_log(const std::string& path);
TimelinePoint timeline_point(const model::StepReport& r);

// What the Training tab trains: a new model from random weights on the built-in induction
// task (model/tasks.h: BOS + r + r over the default vocabulary and length), never the model on
// screen's weights. A language model (trained on text for far longer than a tab can) is not
// retrained here; the tab says so and starts a smaller model.
struct TrainSettings {
  int64_t layers = 2, heads = 4, d_model = 64;
  double lr = 2e-3;
  uint64_t seed = 1;
  int64_t steps = 1500, batch = 32, checkpoint_every = 250;
};
// The defaults for the model on screen: its layers, heads and d_model when it is a toy model
// whose run fits kMaxTrainSeconds here (so a run retrains what is on screen from scratch), else
// the defaults above (`text_model`: a language model, which the tab does not retrain).
TrainSettings settings_for(const model::ModelConfig& shown, bool text_model);

// A live run's progress line: "step 120 of 1500 · loss 3.412 · about 95 s left" (the time
// left from the seconds the run took so far per step; "starting…" before the first step).
std::string progress_text(const Timeline& live, int64_t planned_steps, Lang lang);

// Seconds a run would take, from its arithmetic (forward + backward ≈ 3 × forward FLOPs) at
// the rate the last finished run here reached, or kAssumedFlops before any.
double estimate_seconds(const TrainSettings& s);
inline constexpr double kAssumedFlops = 2e9;   // FLOP/s: a loaded 2-core machine
inline constexpr double kMaxTrainSeconds = 600;
inline constexpr int kTrainerNice = 19;  // the worker's nice: the lowest share a normal thread takes

// The run trains below the UI: its thread runs at nice 19 and its matrix products on that
// thread (OpenBLAS single-threaded while it trains), so frames keep their budget while it
// trains, and it starts at once on a core the window leaves free. Not SCHED_IDLE: on a
// machine whose cores are never idle (other builds, a busy browser) an idle-class thread can
// wait for minutes before its first step, and the tab showed no progress.
class Trainer {
 public:
  ~Trainer();
  // Starts a run writing checkpoints to out_dir (replaced). Throws Error, before starting,
  // for a bad configuration or an estimate over kMaxTrainSeconds (the message says it).
  void start(const TrainSettings& s, const std::string& out_dir);
  void stop();              // asks the run to end after its current step, and waits
  bool running() const { return running_; }
  // Brings `into` up to date with the run: appends the points logged since it was last
  // brought up (a run only ever appends), so a frame copies what is new and the worker
  // waits on the lock for a few points at most, never for a copy of the whole run.
  // `*run` names the run `into` holds (0: none); a newer run replaces it.
  void update(Timeline& into, uint64_t* run) const;
  std::string error() const;
  const std::string& out_dir() const { return out_dir_; }
  int64_t steps() const { return settings_.steps; }

 private:
  TrainSettings settings_;
  std::string out_dir_;
  Task<void> worker_;
  std::atomic<bool> running_{false}, stop_{false};
  mutable std::mutex mutex_;
  uint64_t run_id_ = 0;  // bumped by every start(); under mutex_
  Timeline timeline_;
  std::string error_;
};

}  // namespace attnsim::app
