// The lesson player in the app: a lesson browser with progress, the lesson panel (narrative,
// step n of m, next/previous, try-it tasks and quizzes with feedback), progress saved per
// user (lessons/progress.h) and resumed, presenter mode, and the slide export.
//
// It plugs into the frame with two calls from app_frame (app.cpp) and one from main.cpp:
//   lesson_handle_keys  presenter mode takes ←/→, space, Page Up/Down and Esc
//   lesson_frame        draws the menu bar (with a Lessons menu) and, while a lesson is open,
//                       lays out the panels around the lesson itself
// (attnsim --lesson FILE --export-slides DIR draws the lesson's slides as figures, without
// the window: slide_export.h.)
// The lesson logic (steps, goals, answers, progress) lives in src/lessons, without a screen.
// Presenter mode: F5 or Lessons > Presenter mode; ATTNSIM_PRESENT=1 with --lesson starts in it.
// --lesson DIR opens the lesson browser over that folder.
#pragma once

#include "views/options.h"

namespace attnsim::app {

struct App;

// True when the lesson player took this frame's keys (presenter mode).
bool lesson_handle_keys(App& app);
// Draws the menu bar; when a lesson is open also lays out and draws every panel and returns
// true (app_frame then draws nothing else but the banner).
bool lesson_frame(App& app);
// Opens a lesson file (the window's --lesson FILE) at step `step` (0-based; -1: where the
// learner left it; past the end: step 1, with a banner); false with a banner when it fails to
// load. Its figures fill in on a worker, the step on screen first.
bool open_lesson_file(App& app, const std::string& path, int step = -1);
// True when every figure of the open lesson's step on screen is computed (or no lesson is
// open); puts the figures that landed in place. A headless export waits for it.
bool lesson_values_ready();
// The page without threads: its figures are computed on the main loop, between frames, and the
// first step's would run before the step's own pass is drawn (each a whole pass: lesson 04's is
// the article's size). Held until the first view is ready, then they fill as elsewhere.
void hold_lesson_figures(bool hold);
// Stops the worker filling the lesson's figures and waits for it (it stops before its next
// value): before the process exits, so that it never runs while the statics it reads go.
void stop_lesson_work();
// Opens the lesson with this id from the lessons folder at step `step` (0-based, clamped);
// false with a banner when there is none (the page's #lesson=ID&at=K).
bool open_lesson_by_id(App& app, const std::string& id, int step);
// Opens the lesson browser (the start view's Lessons door, Lessons > Browse lessons…).
void open_lesson_browser();
// The open lesson's id and step (0-based); false when none is open.
bool lesson_position(std::string* id, int* step);

}  // namespace attnsim::app
