// Slides from a lesson: attnsim --lesson FILE --export-slides DIR [--scale N] [--lang ko|en].
// One PNG per lesson step, laid out for a slide (the step title, the view it asks for, its
// short text), and DIR/index.md listing them in order. Runs in a hidden window, so it works
// headless under xvfb-run; pixels come from the app's own capture path (capture_png).
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "app/app.h"
#include "app/capture.h"
#include "app/i18n.h"
#include "app/lesson_state.h"
#include "app/lesson_ui.h"
#include "app/window.h"
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
    for (const auto& d : loaded.diagnostics) std::fprintf(stderr, "%s\n", d.str().c_str());
    std::fprintf(stderr, "attnsim: cannot read lesson %s (check it with attnsim-cli lesson check)\n",
                 options.lesson.c_str());
    return 2;
  }
  const lessons::Lesson& lesson = *loaded.lesson;
  std::error_code ec;
  std::filesystem::create_directories(options.output, ec);
  if (ec) {
    std::fprintf(stderr, "attnsim: cannot create %s: %s\n", options.output.c_str(), ec.message().c_str());
    return 2;
  }
  Window w;
  std::string why;
  if (!open_window(w, kSlideWidth, kSlideHeight, false, &why)) {
    std::fprintf(stderr, "attnsim: %s (run it under xvfb-run -a)\n", why.c_str());
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
  int failed = 0;
  std::string index = "# " + lesson.title.get(lesson_lang()) + "\n\n" + lesson.summary.get(lesson_lang()) + "\n\n";
  try {
    open_lesson(app, lesson, 0);
    for (int i = 0; i < ui.player.step_count(); ++i) {
      if (i > 0) {
        ui.player.go(i);
        apply_step(app);
      }
      settle(app, w);
      if (!app.session.error().empty())
        std::fprintf(stderr, "attnsim: step %d: %s\n", i + 1, app.session.error().c_str());
      const lessons::LessonStep& step = ui.player.step();
      char name[160];
      std::snprintf(name, sizeof name, "%02d-%s.png", i + 1, step.id.c_str());
      ExportRequest r;
      r.scale = options.scale;
      r.transparent = options.transparent;
      r.path = (std::filesystem::path(options.output) / name).string();
      std::string written, error;
      if (capture_png(app, r, &written, &error)) {
        std::printf("%s\n", written.c_str());
        index += std::to_string(i + 1) + ". **" + step.title.get(lesson_lang()) + "** — " + step_short(step) +
                 "\n\n   ![" + step.id + "](" + name + ")\n\n";
      } else {
        std::fprintf(stderr, "attnsim: %s: %s\n", name, error.c_str());
        ++failed;
      }
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "attnsim: %s\n", e.what());
    ++failed;
  }
  {
    const auto path = std::filesystem::path(options.output) / "index.md";
    const auto tmp = path.string() + ".tmp";
    std::ofstream(tmp) << index;
    std::filesystem::rename(tmp, path, ec);
  }
  app.session.wait();
  close_window(w);
  return failed ? 1 : 0;
}

}  // namespace attnsim::app
