// attnsim: the visualizer. Phases as in Dear ImGui's example main: options, window,
// main loop (events, frame, export requests, swap), cleanup.
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "app/app.h"
#include "app/capture.h"
#include "app/export_status.h"
#include "app/headless.h"
#include "views/hf_view.h"
#include "views/model_view.h"
#include "views/i18n.h"
#include "app/lesson_ui.h"
#include "app/open_files.h"
#include "views/slide_export.h"
#include "app/ui_scale.h"
#include "app/window.h"
#include "views/window_settings.h"
#include "engine/blas_kernels.h"
#include "engine/error.h"
#include "engine/scenario.h"
#include "hub/hub.h"
#include "model/formats/hf_model.h"
#include "lessons/lesson.h"

using namespace attnsim;
using namespace attnsim::app;

namespace {

// Paths dropped on the window since the last frame (GLFW calls back inside glfwPollEvents).
std::vector<std::string>& dropped_paths() {
  static std::vector<std::string> paths;
  return paths;
}

// The window remembers its size and text size (window_settings.h); --ui-scale overrides the
// saved text size for this run, and what the learner leaves it at is saved on the way out.
int run_window(const Options& options) {
  const std::string settings_path = default_window_settings_path();
  std::string warning;
  const WindowSettings saved = load_window_settings(settings_path, &warning);
  if (!warning.empty()) std::fprintf(stderr, "attnsim: %s\n", warning.c_str());
  set_text_scale(options.ui_scale > 0 ? options.ui_scale : saved.text_scale);
  Window w;
  std::string why;
  if (!open_window(w, 1280, 720, true, &why, &saved)) return run_without_display(options, why);
  if (options.ui_scale <= 0 && !saved.has_text_scale) {  // never chosen: by the screen's height
    WindowSettings opened;
    read_window_settings(w, &opened);
    set_text_scale(default_text_scale(opened.height));
  }
  App app;
  app.options = options;
  if (!options.lang.empty()) ui_lang() = options.lang == "ko" ? Lang::Ko : Lang::En;
  glfwSetDropCallback(w.handle, [](GLFWwindow*, int n, const char** paths) {
    for (int i = 0; i < n; ++i) dropped_paths().emplace_back(paths[i]);
  });
  // A finished recompute wakes the loop below, so its frame follows at once.
  app.session.set_on_ready([] { glfwPostEmptyEvent(); });
  try {
    app_load_scenario(app, options.scenario);
  } catch (const Error& e) {  // a broken checkpoint: say so, show the default scenario
    app_load_scenario(app, "default");
    app.show_banner(e.what(), true, 10.0);
  }
  if (!options.hub_model.empty()) open_hub_window(app, options.hub_model, true);
  auto last = std::chrono::steady_clock::now();
  int settle = 0;  // frames still to draw after the last event (ImGui settles over a few)
  while (!glfwWindowShouldClose(w.handle) && !app.quit) {
    // Nothing moving: sleep until an event (or a quarter second, for banners and the
    // progress line) instead of redrawing a still picture. A recompute in flight is not
    // motion: redrawing meanwhile would take the cores it runs on, and it wakes the loop
    // itself when it lands (set_on_ready above). A run training or an experiment is
    // motion: its curves and progress line grow.
    const bool moving = app.playback.playing || app.playback.animating() || flash_playing(app) || decode_playing(app) ||
                        model_training(app) || experiment_running(app);
    if (moving || settle > 0) {
      glfwPollEvents();
      settle = moving ? 3 : settle - 1;
    } else {
      glfwWaitEventsTimeout(0.25);
      settle = 3;
    }
    const auto now = std::chrono::steady_clock::now();
    const float dt = std::min(std::chrono::duration<float>(now - last).count(), 0.1f);
    last = now;
    for (const std::string& path : std::exchange(dropped_paths(), {})) {
      try {
        open_user_path(app, path);  // open_files.h: by what the file is
      } catch (const Error& e) {
        app.show_banner(e.what(), true, 10.0);
      }
    }
    render_frame(app, w, dt);
    glfwSwapBuffers(w.handle);
    if (app.export_request.pending) {
      app.export_request.pending = false;
      std::string written, error;
      if (capture_png(app, app.export_request, &written, &error)) note_export(app, written);  // export_status.h
      else note_export_failed(app, error);
    }
  }
  app.session.wait();
  WindowSettings now;
  read_window_settings(w, &now);
  try {
    save_window_settings(settings_path, now);
  } catch (const Error& e) {  // a read-only home: the next run opens at the screen's size
    std::fprintf(stderr, "attnsim: %s\n", one_line(e.what()).c_str());
  }
  close_window(w);
  return 0;
}

// --print-trace: the scenario's run as `attnsim-cli trace --json` prints it, with no window
// (the browser build logs the same JSON with #scenario=NAME&log=trace; tests compare them).
int run_print_trace(const Options& options) {
  App app;
  app.options = options;
  app_load_scenario(app, options.scenario);
  app.session.wait();
  if (!app.data()) throw Error(app.session.error().empty() ? "no run" : app.session.error());
  std::printf("%s\n", trace_json_text(*app.data()).c_str());
  return 0;
}

// A headless run with --lesson: a lesson that does not load is an error (exit 2), not a
// banner in a picture nobody sees.
bool lesson_loads(const Options& options) {
  if (options.lesson.empty() || options.mode == Mode::Window || options.mode == Mode::Help) return true;
  // Its shape only: the figures are the export's to wait for (headless.cpp), the step's own.
  const auto loaded = lessons::load_lesson(options.lesson, lessons::Fill::Later);
  const int steps = loaded.lesson ? static_cast<int>(loaded.lesson->steps.size()) : 0;
  if (loaded.lesson && loaded.diagnostics.empty() && options.lesson_at > steps) {
    std::fprintf(stderr, "attnsim: --at %d: lesson %s has steps 1 to %d\n", options.lesson_at,
                 one_line(options.lesson).c_str(), steps);
    return false;
  }
  if (loaded.lesson && loaded.diagnostics.empty()) return true;
  for (const auto& d : loaded.diagnostics) std::fprintf(stderr, "%s\n", one_line(d.str()).c_str());
  std::fprintf(stderr, "attnsim: cannot use lesson %s (check it with attnsim-cli lesson check)\n",
               one_line(options.lesson).c_str());
  return false;
}

// --model DIR: a Hugging Face folder (config.json) or a checkpoint (model.json), which the
// model scenario opens; anything else is refused here, before a window or an export is made
// (a bad --model used to be dropped silently and the default scenario drawn, exit 0).
// --model ORG/NAME[@REV] is first resolved to its folder (src/hub/hub.h: a folder of that
// name, the Hugging Face cache, else a download, refused before any weight byte when the model
// would not fit in 75 % of memory). In a window the name goes to the Open from Hugging Face
// window instead, which shows the download's progress and opens the model when it lands; a
// headless export resolves it here, before its first frame.
void check_model_option(Options& o) {
  if (o.model.empty()) return;
  std::error_code ec;
  if (o.mode == Mode::Window && !std::filesystem::is_directory(o.model, ec) && hub::parse_repo_ref(o.model)) {
    o.hub_model = std::exchange(o.model, "");
    return;
  }
  hub::HubOptions fetch;
  fetch.check_weights = [name = o.model](const std::string& config_json, int64_t weight_bytes) {
    model::hf::check_hf_download(name, config_json, weight_bytes, 0);
  };
  o.model = hub::resolve_model(o.model, fetch).dir;
  namespace fs = std::filesystem;
  const fs::path dir(o.model);
  if (!fs::is_directory(dir, ec)) throw Error("--model " + o.model + ": not a folder");
  const bool hf = is_hf_folder(o.model);
  if (!hf && !fs::is_regular_file(dir / "model.json", ec)) {
    for (const char* name : {"config.json", "model.json"})
      if (fs::exists(fs::symlink_status(dir / name, ec)))
        throw Error("--model " + o.model + ": its " + name + " is not a regular file");
    throw Error("--model " + o.model + ": neither a Hugging Face folder (config.json + model.safetensors) nor an "
                "attnsim checkpoint (model.json)");
  }
  if (o.scenario == "default") o.scenario = "model";
}

// A window opened with nothing named (no --scenario, --lesson or --model) starts on the start
// view; a headless run keeps "default", the article's example, so its pictures stay as they were.
void choose_first_screen(Options& o) {
  if (o.mode == Mode::Window && !o.scenario_given && o.lesson.empty() && o.model.empty() && o.hub_model.empty())
    o.scenario = "start";
}

int run(const Options& options) {
  switch (options.mode) {
    case Mode::Help: {
      std::printf("%s\nscenarios:\n", kUsage);
      for (const auto& s : all_scenarios()) std::printf("  %-24s %s\n", s.name.c_str(), s.title_en.c_str());
      std::printf("  %-24s %s\n  %-24s %s\n", "model", "the trained model: head grid, ablation, predictions",
                  "model-ablate-induction", "the trained model with its induction heads knocked out");
      return 0;
    }
    case Mode::Export: return options.figure_export() ? run_figure_export(options) : run_export(options);
    case Mode::ExportSlides: return run_slides_export(options);
    case Mode::ExportGif:
    case Mode::ExportFrames: return run_animation_export(options);
    case Mode::Bench: return run_bench(options);
    case Mode::BenchEdit: return run_bench_edit(options);
    case Mode::PrintTrace: return run_print_trace(options);
    case Mode::Window: return run_window(options);
    case Mode::Version: {
      const BlasKernels& blas = blas_kernels();
      std::printf("attnsim %s\nBLAS: %s\n", ATTNSIM_VERSION, blas.summary().c_str());
      if (!blas.warning.empty()) std::printf("advice: %s\n", blas.warning.c_str());
      return 0;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The BLAS kernels are chosen before any other thread exists (blas_kernels.h). A weaker
  // kernel set is said where speed is the point (the benchmarks, the pipeline panel), so an
  // error elsewhere stays the one line it promises.
  const std::string& blas_warning = blas_kernels().warning;
  Options options;
  try {
    options = parse_options(std::vector<std::string>(argv + 1, argv + argc));
    check_model_option(options);
    choose_first_screen(options);
    if (!is_model_scenario(options.scenario) && (options.layer >= 0 || !options.ablate.empty() || !options.text.empty()))
      throw Error("--layer, --ablate and --text take the model scenario (--scenario model, or --model DIR)");
    if (!is_model_scenario(options.scenario))
      find_scenario(options.scenario);  // an unknown name fails here, with the list
  } catch (const Error& e) {
    std::fprintf(stderr, "attnsim: %s (see --help)\n", one_line(e.what()).c_str());
    return 2;
  }
  if (!blas_warning.empty() && (options.mode == Mode::Bench || options.mode == Mode::BenchEdit))
    std::fprintf(stderr, "attnsim: warning: %s\n", blas_warning.c_str());
  // A lesson's figures are filled on a worker (lesson_ui.h): it stops before main returns,
  // whatever the way out, so it never reads a static being destroyed.
  struct StopLessonWork {
    ~StopLessonWork() { stop_lesson_work(); }
  } stop_lesson_work_on_exit;
  // Every mode's failures end here as one line: bad_alloc and library errors included.
  try {
    if (!lesson_loads(options)) return 2;
    return run(options);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "attnsim: out of memory (lower the sizes)\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnsim: %s\n", one_line(e.what()).c_str());
  }
  return 2;
}
