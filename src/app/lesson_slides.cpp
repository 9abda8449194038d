// Slides from a lesson: attnsim --lesson FILE --export-slides DIR [--scale N] [--lang ko|en].
// One PNG per lesson step, laid out for a slide (the step title, the view it asks for, its
// short text), and DIR/index.md listing them in order. Runs in a hidden window, so it works
// headless under xvfb-run; pixels come from the app's own capture path (capture_png).
#include <cstdio>
#include <filesystem>

#include "app/app.h"
#include "app/capture.h"
#include "app/i18n.h"
#include "app/lesson_state.h"
#include "app/lesson_ui.h"
#include "app/window.h"
#include "engine/atomic_file.h"
#include "engine/error.h"

namespace attnsim::app {

namespace {

// 16:9 at 1× (1280x720 logical pixels); --scale 2 gives 2560x1440.
constexpr int kSlideWidth = 1280, kSlideHeight = 720;

// Lets the step's run land and the view settle (ImGui sizes tables over a few frames).
void settle(App& app, Window& w) {
  app.session.wait();
  for (int i = 0; i < 4; ++i) render_frame(app, w, 0.0f);
}

}  // namespace

int run_lesson_slides(const Options& options) {
  auto loaded = lessons::load_lesson(options.lesson);
  if (!loaded.lesson) {
    for (const auto& d : loaded.diagnostics) std::fprintf(stderr, "%s\n", one_line(d.str()).c_str());
    std::fprintf(stderr, "attnsim: cannot read lesson %s (check it with attnsim-cli lesson check)\n",
                 options.lesson.c_str());
    return 2;
  }
  const lessons::Lesson& lesson = *loaded.lesson;
  Window w;
  std::string why;
  if (!open_window(w, kSlideWidth, kSlideHeight, false, &why)) {
    std::fprintf(stderr, "attnsim: %s (run it under xvfb-run -a)\n", one_line(why).c_str());
    return 2;
  }
  App app;
  app.options = options;
  app.options.lesson.clear();  // opened below, not by the first frame
  app.headless = true;
  if (!options.lang.empty()) ui_lang() = options.lang == "ko" ? Lang::Ko : Lang::En;
  LessonUi& ui = lesson_ui();
  ui.opened_from_options = true;
  ui.no_save = true;  // exporting slides is not studying: leave the progress file alone
  ui.progress_loaded = true;
  ui.slide_mode = true;
  ui.presenter_scale = 1.5f;
  std::vector<std::string> written_paths;
  int code = 0;
  try {
    // Every slide and index.md go to a hidden folder renamed into place at the end: a step
    // the engine refuses or a failed write leaves nothing behind.
    write_folder_atomically(options.output, [&](const std::string& dir) {
      std::string index = "# " + lesson.title.get(lesson_lang()) + "\n\n" + lesson.summary.get(lesson_lang()) + "\n\n";
      open_lesson(app, lesson, 0);
      for (int i = 0; i < ui.player.step_count(); ++i) {
        if (i > 0) {
          ui.player.go(i);
          apply_step(app);
        }
        settle(app, w);
        const lessons::LessonStep& step = ui.player.step();
        if (!app.session.error().empty())
          throw Error("step " + std::to_string(i + 1) + " (" + step.id + "): " + app.session.error());
        char name[160];
        std::snprintf(name, sizeof name, "%02d-%s.png", i + 1, step.id.c_str());
        ExportRequest r;
        r.scale = options.scale;
        r.transparent = options.transparent;
        r.path = (std::filesystem::path(dir) / name).string();
        std::string written, error;
        if (!capture_png(app, r, &written, &error)) throw Error(error);
        written_paths.push_back((std::filesystem::path(options.output) / name).string());
        index += std::to_string(i + 1) + ". **" + step.title.get(lesson_lang()) + "** — " + step_short(step) +
                 "\n\n   ![" + step.id + "](" + name + ")\n\n";
      }
      write_file_atomically((std::filesystem::path(dir) / "index.md").string(), index);
    }, options.force);
  } catch (const std::exception& e) {  // Error, or bad_alloc from a step: one line, exit 2
    std::fprintf(stderr, "attnsim: %s\n", one_line(e.what()).c_str());
    code = 2;
  }
  app.session.wait();
  close_window(w);
  if (code == 0)
    for (const auto& p : written_paths) std::printf("%s\n", p.c_str());
  return code;
}

}  // namespace attnsim::app
