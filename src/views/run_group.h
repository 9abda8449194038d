// The runs of one recipe (issue 25: claims over runs, not one curve). A recipe trained with
// several seeds leaves sibling folders, e.g. assets/models/induction-d64-h8-6k-s1, -s2, -s3.
// Two runs are one recipe when
//   - their folder names are equal once a seed suffix "-sN" is taken off
//     (induction-d64-h1 and induction-d64-h1-s2 are; induction and induction-d64-h1 are not), and
//   - their model.json recipes are equal except for the seeds: "config" without "seed",
//     "train" without "data_seed".
// The group is found from the folders at run time (new recipes need no code), read from each
// run's train_log.jsonl, and summed up per logged step as min / median / max over the seeds.
// No OpenGL.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "views/training.h"
#include "model/formats/config.h"

namespace attnsim::app {

// Over the seeds at one step. The median of an even count is the mean of the two middle values
// (what the lessons' model.runs_median states).
struct Spread {
  double min = 0, median = 0, max = 0;
};
Spread spread_of(std::vector<double> values);  // throws Error when empty

struct SpreadPoint {
  int64_t step = 0;
  Spread loss;
  // Only where every run logged it: a part with no target in a run's batch (-1), a step a
  // run did not score.
  std::optional<Spread> loss_first, loss_repeat, best_induction;
};

// Per logged step of `runs` (named by `names` in messages). Throws Error, naming two runs and
// the first line where they differ, when the runs do not log the same steps: a spread over
// different steps would compare different moments of training.
std::vector<SpreadPoint> run_spread(const std::vector<Timeline>& runs, const std::vector<std::string>& names);

struct RunGroup {
  std::string name;                 // the folder name less its seed suffix: induction-d64-h8-6k
  std::vector<std::string> runs;    // the run folders, by seed
  std::vector<uint64_t> seeds;      // config.seed of each
  size_t open = 0;                  // the run the group was found from
  model::ModelConfig config;        // the open run's (the same for all but the seed)
  std::vector<Timeline> timelines;  // per run
  std::vector<SpreadPoint> spread;  // per logged step (empty for a single run)
  bool several() const { return runs.size() > 1; }
};

// The folder name less a trailing "-sN" (N digits).
std::string recipe_name(const std::string& folder_name);

// The runs beside `run_dir` (a run folder, not a saved step) with its recipe, by seed; holds
// run_dir itself. Throws Error for an unreadable model.json of any run it compares.
std::vector<std::string> recipe_runs(const std::string& run_dir);

// recipe_runs, their logs and the spread. Throws Error for a missing or broken log and for
// runs whose steps differ (run_spread).
RunGroup read_run_group(const std::string& run_dir);

// How many of the group's final checkpoints learned the task (model::run_learned on
// model::repeat_accuracy: the lessons' model.runs_learned rule). Loads and evaluates each.
struct LearnedCount {
  int64_t learned = 0, runs = 0;
};
LearnedCount count_learned(const RunGroup& group);

}  // namespace attnsim::app
