// The lesson player's state inside the app (one per process). See lesson_ui.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "views/lesson_figures.h"
#include "lessons/lesson.h"
#include "lessons/player.h"
#include "lessons/progress.h"
#include "lessons/quantity.h"
#include "views/tasks.h"

namespace attnsim::app {

struct App;

struct LessonUi {
  // The lessons folder, loaded on first use for the browser.
  std::vector<lessons::Lesson> library;
  std::string dir;
  bool library_loaded = false;

  lessons::Player player;
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
  std::vector<StepFigure> figures;  // the step's engine figures (lesson_figures.h)
  int figures_step = -1;
  lessons::Evaluator eval;
};

LessonUi& lesson_ui();
// Korean or English by the UI language.
const char* L(const char* ko, const char* en);
// Shows the player's current step on the simulator (scenario, focus step, zoom) and records
// progress.
void apply_step(App& app);
void open_lesson(App& app, const lessons::Lesson& lesson, int step);

}  // namespace attnsim::app
