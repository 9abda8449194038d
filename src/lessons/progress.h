// Progress through the lessons, saved per user in the XDG data folder and resumed:
//   $XDG_DATA_HOME/attnsim/progress.json  (default ~/.local/share/attnsim/progress.json)
// Plain JSON, written to a temporary file and renamed. No GUI.
#pragma once

#include <map>
#include <set>
#include <string>

namespace attnsim::lessons {

struct LessonProgress {
  int step = 0;                          // the step the learner was on (0-based)
  std::set<std::string> seen;            // step ids visited
  std::set<std::string> quizzes_right;   // step ids whose quiz was answered right
  std::set<std::string> tasks_done;      // step ids whose task goal was reached
};

struct Progress {
  std::string last_lesson;               // the lesson to resume
  std::map<std::string, LessonProgress> lessons;  // by lesson id

  // Fraction of a lesson's steps seen (0..1), given its step count.
  double fraction(const std::string& lesson_id, size_t steps) const;
};

// $XDG_DATA_HOME/attnsim/progress.json, or $HOME/.local/share/attnsim/progress.json.
std::string default_progress_path();
// A missing file gives empty progress; an unreadable or corrupt one too (with `warning`).
Progress load_progress(const std::string& path, std::string* warning = nullptr);
// Creates the folder if needed. Returns false with `error` on failure.
bool save_progress(const Progress& progress, const std::string& path, std::string* error = nullptr);

}  // namespace attnsim::lessons
