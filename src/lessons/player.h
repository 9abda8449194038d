// The lesson player's logic, without a screen: where the learner is, what the simulator must
// show at each step, whether a task's goal is reached, whether a quiz answer is right, and
// the progress to save. The app's lesson panel draws this; tests drive it directly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lessons/lesson.h"
#include "lessons/progress.h"
#include "lessons/quantity.h"

namespace attnsim::lessons {

// The simulator state a task is checked against (what the app is showing now).
struct LiveState {
  MhaConfig config;
  std::vector<std::string> sentences, key_sentences;
  float input_scale = 1.0f;
  std::string preset;        // the scenario it started from
  std::string trace_step;    // the step on screen
  // The trained model, when the model panel is on screen (model tasks).
  bool model = false;
  std::string ablated;       // the heads knocked out, "0.1,1.3" ("" = none)
  int64_t knocked_out = 0;
  bool mean_ablation = false;
};

// A task's claim as the learner's state makes it: on a model task, a model.* claim reads the
// heads the learner knocked out (its `ablate`); any other claim is unchanged.
Claim live_claim(const Task& task, const Claim& claim, const LiveState& live);
// The number of heads in an ablation list ("0.1,1.3" -> 2; "" -> 0).
int64_t head_count(const std::string& ablated);

// Settings that reproduce a live state exactly (for engine claims on it).
Settings settings_of(const LiveState& live);

// The first setting where the live state differs from a task's goal.
struct GoalGap {
  std::string setting;  // "heads", "bias", "W_O = identity", "the mask", ...
  std::string want, have;
};
// Compares the goal's set fields with the live state (a model goal: the model panel is on
// screen, zero ablation, that many heads knocked out); `why` names the first difference
// ("heads is 1, the task asks for 4"), `gap` gives its parts for a translated message.
bool goal_reached(const Task& task, const LiveState& live, std::string* why = nullptr,
                  GoalGap* gap = nullptr);

// A learner's number: digits with optional , _ or spaces, a decimal point, an exponent,
// and an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB; k, M, G). nullopt if unreadable.
std::optional<double> parse_answer(const std::string& text);

struct QuizResult {
  bool readable = true;
  bool right = false;
};
QuizResult check_number(const Quiz& quiz, const std::string& typed);
QuizResult check_choice(const Quiz& quiz, int picked);  // picked is 1-based

class Player {
 public:
  // Opens a lesson at a step (clamped), e.g. the saved one.
  void open(const Lesson& lesson, int step = 0);
  bool is_open() const { return lesson_.has_value(); }
  const Lesson& lesson() const { return *lesson_; }
  // The open lesson, for its figures to be put in place as they are computed (value_fill.h).
  Lesson& lesson_to_fill() { return *lesson_; }
  int step_index() const { return step_; }
  int step_count() const { return lesson_ ? static_cast<int>(lesson_->steps.size()) : 0; }
  const LessonStep& step() const { return lesson_->steps[static_cast<size_t>(step_)]; }
  bool next();      // false at the last step
  bool previous();  // false at the first step
  void go(int step);
  // The simulator settings of the current step (lesson + step overrides), resolved.
  Resolved state() const;
  // Marks the current step seen in `progress` and remembers it as the place to resume.
  void record(Progress& progress) const;

 private:
  std::optional<Lesson> lesson_;
  int step_ = 0;
};

}  // namespace attnsim::lessons
