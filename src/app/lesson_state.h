// The lesson player's state inside the app (one per process). See lesson_ui.h.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "views/lesson_figures.h"
#include "lessons/lesson.h"
#include "lessons/player.h"
#include "lessons/progress.h"
#include "lessons/quantity.h"
#include "lessons/value_fill.h"
#include "views/tasks.h"

namespace attnsim::app {

struct App;

// The open lesson's figures, filled on a worker (lessons/value_fill.h): the worker fills the
// texts of step `want` first and leaves each in `landed`; the frame puts them in place.
struct LessonFill {
  std::atomic<int> want{0};
  std::atomic<bool> stop{false};  // the lesson was closed or another opened
  std::mutex mutex;               // guards what follows
  std::vector<lessons::FilledText> landed;
  std::vector<lessons::Diagnostic> problems;  // set when every text is filled
  bool finished = false;
};

struct LessonUi {
  // The lessons folder, loaded on first use for the browser.
  std::vector<lessons::Lesson> library;
  std::string dir;
  bool library_loaded = false;
  bool value_cache_on = false;  // lessons::use_model_value_cache(its default file) was called

  lessons::Player player;
  // Its figures: the job filling them, which texts have landed (by lesson_texts() index, with
  // each text's step), and lessons whose every figure landed, by path (opened again at once).
  std::shared_ptr<LessonFill> fill;
  Task<void> fill_task;
  std::vector<Task<void>> retired_fills;  // stopped jobs finishing the text they were on
  std::vector<int> text_step;
  std::vector<bool> text_filled;
  std::map<std::string, lessons::Lesson> filled;
  lessons::Progress progress;
  std::string progress_path;  // empty = lessons::default_progress_path()
  bool progress_loaded = false;

  bool browser_open = false;
  bool presenting = false;    // presenter mode: large type, controls hidden, keys drive
  float presenter_scale = 1.6f;
  bool opened_from_options = false;

  // The step on screen and its interaction state.
  std::string applied_lesson;
  int applied_step = -1;
  char answer[64] = {};
  bool focus_answer = false;  // a number quiz's field takes the keys when its step opens
  int picked = 0;
  std::optional<lessons::QuizResult> result;
  bool show_explanation = false;
  std::string task_key;       // the live state the task was last checked on
  bool task_done = false;
  std::string task_message;
  // A model task's claims, checked on a worker (panel_lesson.cpp draw_task): the first
  // failure ("" = all hold) for the state `task_job_key` (step id | live state).
  Task<std::string> task_job;
  std::string task_job_key;
  std::string pending_action;  // the step's action, pressed once its run is on screen
  bool scroll_to_highlight = false;  // the model panel scrolls to the step's highlighted head once
  std::vector<StepFigure> figures;  // the step's engine figures (lesson_figures.h)
  int figures_step = -1;
  lessons::Evaluator eval;
};

LessonUi& lesson_ui();
// True when every text of step `step` has its figures (value_fill.h).
bool step_filled(const LessonUi& ui, int step);
// Korean or English by the UI language.
const char* L(const char* ko, const char* en);
// Shows the player's current step on the simulator (scenario, focus step, zoom) and records
// progress.
void apply_step(App& app);
void open_lesson(App& app, const lessons::Lesson& lesson, int step);

}  // namespace attnsim::app
