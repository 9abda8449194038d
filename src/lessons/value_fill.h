// Filling a lesson's {value:...} marks one text at a time, so that a lesson opens at once.
//
// A lesson on a trained model states figures that take seconds to minutes of forward passes
// (model_quantity.h). load_lesson(path, Fill::Later) returns it with those marks showing
// kPendingFigure; a ValueFill, on a copy and on a worker, fills the texts of the step the
// learner is on first, then the others, and each filled text is put in place in the lesson on
// screen (put_filled). The figures are those fill_values gives: the same function fills both.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "lessons/lesson.h"

namespace attnsim::lessons {

// One text with its figures filled, and where it goes.
struct FilledText {
  size_t index = 0;  // its place in lesson_texts() order
  int step = -1;     // its step (-1: the lesson's title and summary)
  Text text;
};

// Which step each text of lesson_texts() belongs to (-1: the lesson's title and summary).
std::vector<int> text_steps(Lesson& lesson);

class ValueFill {
 public:
  // A copy of the lesson (loaded with Fill::Later, or already filled: it fills again).
  explicit ValueFill(const Lesson& lesson);
  ~ValueFill();
  ValueFill(const ValueFill&) = delete;
  ValueFill& operator=(const ValueFill&) = delete;

  // Fills the next text not filled yet: the first one left of step `want`, else of the steps
  // after it, then of those before it. nullopt when every text is filled, or when `stop` was
  // set (seen before each value; that text stays unfilled). Not thread-safe: one thread calls
  // it (the app's worker).
  std::optional<FilledText> next(int want, const std::atomic<bool>* stop = nullptr);
  // Placeholders that could not be filled (as fill_values reports them in fill_problems).
  const std::vector<Diagnostic>& problems() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Puts a filled text in its place in the lesson it was copied from.
void put_filled(Lesson& lesson, const FilledText& filled);

}  // namespace attnsim::lessons
