// Headless modes. See headless.h.
#include "app/headless.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "app/app.h"
#include "app/capture.h"
#include "app/gl.h"
#include "app/lesson_ui.h"
#include "views/i18n.h"
#include "views/hf_view.h"
#include "views/model_view.h"
#include "views/slide_export.h"
#include "app/ui_scale.h"
#include "app/window.h"
#include "engine/atomic_file.h"
#include "engine/error.h"

namespace attnsim::app {

namespace {

double process_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
          static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3);
}

double thread_cpu_ms() {  // the calling thread's
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// CPU time of this process's threads named llvmpipe-N (Mesa's rasteriser; /proc schedstat's
// first field: ns on a CPU). With the UI thread's, what a frame costs, without a training
// worker's time and without the waits other processes' load adds.
double rasteriser_cpu_ms() {
  double ms = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(e.path() / "comm");
    std::string name;
    if (!std::getline(comm, name) || name.rfind("llvmpipe", 0) != 0) continue;
    std::ifstream stat(e.path() / "schedstat");
    double ns = 0;
    if (stat >> ns) ms += ns / 1e6;
  }
  return ms;
}

// Opens a hidden window, loads the scenario and waits for its run; on failure prints one
// line, closes the window and returns false.
bool start(App& app, Window& w, const Options& options) {
  std::string why;
  set_text_scale(options.ui_scale > 0 ? options.ui_scale : 1.0f);  // never the window's saved size
  if (!open_window(w, options.window_width, options.window_height, false, &why)) {
    std::fprintf(stderr, "attnsim: %s\n", why.c_str());
    return false;
  }
  try {
    app.options = options;
    app.headless = true;
    if (!options.lang.empty()) ui_lang() = options.lang == "ko" ? Lang::Ko : Lang::En;
    app_load_scenario(app, options.scenario);
    app.session.wait();
    if (!app.session.error().empty()) throw Error(app.session.error());
    if (app.model) app.model->settle();  // a picture shows the held-out loss, never "measuring…"
    // ImGui sizes auto-fitting windows and tables over the first frames.
    for (int i = 0; i < 3; ++i) render_frame(app, w, 0.0f);
  } catch (const Error& e) {
    std::fprintf(stderr, "attnsim: %s\n", one_line(e.what()).c_str());
    close_window(w);
    return false;
  }
  return true;
}

void write_geometry(const App& app, const std::string& path, int scale) {
  AtomicFile file(path);
  std::ostream& out = file.stream();
  const Step* s = app.current_step();
  out << "{\"step\": \"" << (s ? s->name : "") << "\", \"batch\": " << app.batch
      << ", \"scale\": " << scale << ", \"rows\": [";
  for (size_t i = 0; i < app.geometry_rows.size(); ++i) {
    const ImVec4& r = app.geometry_rows[i];
    out << (i ? ", " : "") << "[" << r.x << ", " << r.y << ", " << r.z << ", " << r.w << "]";
  }
  out << "]";
  if (app.presenting_decode) out << ", \"decode_overflow\": " << app.decode_overflow;
  // Figure parts the flash and memory panels drew, and every panel's rect (a panel export's
  // PNG starts at its panel's corner).
  for (const auto& [name, r] : app.figure_rects)
    out << ", \"" << name << "\": [" << r.x << ", " << r.y << ", " << r.z << ", " << r.w << "]";
  out << ", \"font_px\": " << ImGui::GetFontSize();  // the interface's text (--ui-scale)
  out << ", \"panels\": {";
  bool first = true;
  for (const auto& [name, r] : app.panel_rects) {
    out << (first ? "" : ", ") << "\"" << name << "\": [" << r.x << ", " << r.y << ", " << r.z << ", " << r.w << "]";
    first = false;
  }
  out << "}";
  // The model panel: where it sits, and each head's cell with its role and ablation.
  if (app.model && !app.model_cells.empty()) {
    const auto it = app.panel_rects.find("model");
    if (it != app.panel_rects.end())
      out << ", \"model_panel\": [" << it->second.x << ", " << it->second.y << ", " << it->second.z << ", "
          << it->second.w << "]";
    out << ", \"model_cells\": [";
    const int64_t heads = app.model->model().config.heads;
    for (size_t i = 0; i < app.model_cells.size(); ++i) {
      const ImVec4& r = app.model_cells[i];
      const int64_t l = static_cast<int64_t>(i) / heads, h = static_cast<int64_t>(i) % heads;
      out << (i ? ", " : "") << "{\"layer\": " << l << ", \"head\": " << h << ", \"role\": \""
          << app.model->role(l, h) << "\", \"ablated\": " << (app.model->is_ablated({l, h}) ? "true" : "false")
          << ", \"rect\": [" << r.x << ", " << r.y << ", " << r.z << ", " << r.w << "]}";
    }
    out << "]";
  }
  // The Hugging Face panel: the layer on screen, each head's cell and whether it is out.
  if (app.hf && app.hf->run()) {
    const auto it = app.panel_rects.find("model");
    if (it != app.panel_rects.end())
      out << ", \"model_panel\": [" << it->second.x << ", " << it->second.y << ", " << it->second.z << ", "
          << it->second.w << "]";
    const HfRun& r = *app.hf->run();
    out << ", \"hf_layer\": " << r.layer << ", \"hf_tokens\": " << r.tokens.size() << ", \"hf_loss\": " << (std::isnan(r.loss) ? std::string("null") : std::to_string(r.loss))
        << ", \"hf_cells\": [";
    const int64_t heads = app.hf->config().heads;
    for (size_t i = 0; i < app.hf_cells.size(); ++i) {
      const ImVec4& c = app.hf_cells[i];
      const int64_t l = static_cast<int64_t>(i) / heads, h = static_cast<int64_t>(i) % heads;
      out << (i ? ", " : "") << "{\"layer\": " << l << ", \"head\": " << h << ", \"ablated\": "
          << (app.hf->is_ablated({l, h}) ? "true" : "false") << ", \"rect\": [" << c.x << ", " << c.y << ", " << c.z
          << ", " << c.w << "]}";
    }
    out << "]";
  }
  out << "}\n";
  file.commit();
}

}  // namespace

int run_export(const Options& options) {
  App app;
  Window w;
  if (!start(app, w, options)) return 2;
  if (!options.lesson.empty()) {
    // A lesson's figures fill in on a worker (lesson_ui.h): the picture waits for its step's
    // own, or its text would show "…"; then the frames that lay the filled text out.
    while (!lesson_values_ready()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    app.session.wait();
    for (int i = 0; i < 3; ++i) render_frame(app, w, 0.0f);
  }
  if (!options.step.empty() && app.step_index(options.step) < 0) {
    std::fprintf(stderr, "attnsim: unknown step '%s'\n", options.step.c_str());
    close_window(w);
    return 2;
  }
  if (options.panel == "flash") {
    // the flash panel takes the centre; let it lay out and compute its tile trace
    app.presenting_flash = true;
    for (int i = 0; i < 3; ++i) render_frame(app, w, 0.0f);
  }
  if (options.panel == "model" && app.hf) {
    for (int i = 0; i < 2; ++i) render_frame(app, w, 0.0f);  // the grid's glyphs and child window settle
  } else if ((options.panel == "model" || options.panel == "timeline" || options.panel == "experiments") &&
             !app.model) {
    std::fprintf(stderr, "attnsim: --panel %s needs --scenario model or model-ablate-induction\n",
                 options.panel.c_str());
    close_window(w);
    return 2;
  }
  if (options.panel == "timeline") {
    open_model_tab(app, "training");
    for (int i = 0; i < 2; ++i) render_frame(app, w, 0.0f);
  }
  if (options.panel == "experiments") {
    open_model_tab(app, "experiments");
    render_frame(app, w, 0.0f);
    if (!options.experiment.empty()) {
      run_model_experiment(app, options.experiment);
      wait_model_experiment(app);
    }
    for (int i = 0; i < 2; ++i) render_frame(app, w, 0.0f);
  }
  if (options.panel == "slide") {
    // the slide view takes the centre, in the theme asked for
    app.presenting_slide = true;
    app.slide_theme = options.theme;
    render_frame(app, w, 0.0f);
    wait_model_slide(app);  // a model scenario's slide is built on a worker
    for (int i = 0; i < 3; ++i) render_frame(app, w, 0.0f);
  }
  if (options.panel == "decode" && !app.presenting_decode) {
    std::string names;
    for (const Scenario& s : all_scenarios())
      if (s.decode.enabled) names += (names.empty() ? "" : ", ") + s.name;
    std::fprintf(stderr, "attnsim: --panel decode needs a decode scenario (%s)\n", names.c_str());
    close_window(w);
    return 2;
  }
  // Another panel asked of a decode scenario: the centre shows the tensor view as usual.
  if (options.panel != "decode" && options.panel != "window") app.presenting_decode = false;
  // The tensor panel asked of a bug scenario: the centre shows it instead of the bug lab.
  if (options.panel == "tensor") app.presenting_bug_lab = false;
  if (options.panel == "buglab" && !app.presenting_bug_lab) {
    std::fprintf(stderr, "attnsim: scenario '%s' has no bug lab\n", options.scenario.c_str());
    close_window(w);
    return 2;
  }
  app.buglab_head = options.head;  // --head: the bug lab's triptych, like its slide's
  if (options.action == "check-hidden") buglab_check_hidden(app);
  if (options.action == "first-nan") buglab_first_nan(app);
  if (options.action == "try-view") memory_try_view(app);
  if (options.action == "show-contribution" && app.model) app.model->set_show_contribution(true);
  if (options.action.rfind("open-", 0) == 0 && app.model) {  // a model panel tab: open-overview ...
    open_model_tab(app, options.action.substr(5));
    for (int i = 0; i < 3; ++i) render_frame(app, w, 0.0f);  // the tab opens, its figure's glyphs load
  }
  if (options.action == "measure-flash") {  // the flash panel's measurement, to its last pass
    start_flash_measurement(app);
    wait_flash_measurement(app);
    for (int i = 0; i < 2; ++i) render_frame(app, w, 0.0f);
  }
  if (options.click_x >= 0) {
    app.click = {options.click_x, options.click_y};
    app.click_frames = 3;
    for (int i = 0; i < 3; ++i) render_frame(app, w, 0.0f);
    if (app.hf) app.hf->wait();  // what the click started (a Hugging Face recompute) lands
    for (int i = 0; i < 2; ++i) render_frame(app, w, 0.0f);
  }
  if (app.presenting_decode && app.session.scenario().decode.enabled) {
    // Decode scenarios: --progress picks the frame (0 = the prefill, 1 = the last step).
    const int frames = decode_frame_count(app);
    const float at = options.progress * static_cast<float>(std::max(frames - 1, 0));
    set_decode_frame(app, static_cast<int>(std::ceil(at)), at - std::floor(at) > 0 ? at - std::floor(at) : 1.0f);
    render_frame(app, w, 0.0f);
  } else if (options.progress < 1.0f && options.panel == "flash") {
    // The flash panel's own position: that fraction of its tile events. One frame builds
    // that event's figure and asks the font atlas for its glyphs before the capture.
    set_flash_progress(app, options.progress);
    render_frame(app, w, 0.0f);
  } else if (options.progress < 1.0f) {
    // Freeze the transition from the previous active step into this one at `progress`.
    const int step = app.playback.step;
    scrub(app.playback, prev_step(app.active_steps(), step), step, options.progress);
    app.playback.paused = true;
  }
  ExportRequest r;
  // The Training and Experiments tabs are the model panel's.
  r.panel = options.panel == "timeline" || options.panel == "experiments" ? "model" : options.panel;
  r.path = options.output;
  r.scale = options.scale;
  r.transparent = options.transparent;
  std::string written, error;
  bool ok = capture_png(app, r, &written, &error);
  if (ok && !options.geometry.empty()) {
    try {
      write_geometry(app, options.geometry, options.scale);
    } catch (const Error& e) {  // the PNG alone would be half the answer: take it back
      error = e.what();
      std::remove(written.c_str());
      ok = false;
    }
  }
  close_window(w);
  if (!ok) {
    std::fprintf(stderr, "attnsim: %s\n", one_line(error).c_str());
    return 2;
  }
  std::printf("%s\n", written.c_str());
  return 0;
}

int run_bench(const Options& options) {
  App app;
  Window w;
  if (!start(app, w, options)) return 2;
  // Animate the whole time: no hold between steps, wrap at the end.
  app.playback.playing = true;
  app.playback.loop = true;
  app.playback.hold = 0.0f;
  if (options.train_live) {
    if (!app.model || !start_model_training(app)) {
      std::fprintf(stderr, "attnsim: --train-live needs --scenario model (and a run that is not refused)\n");
      close_window(w);
      return 2;
    }
    open_model_tab(app, "training");
  }
  if (app.presenting_decode && app.session.scenario().decode.enabled) decode_play(app, true);  // decode animates
  if (options.panel == "slide") {  // the slide view in the centre (a model's is built on a worker)
    app.presenting_slide = true;
    app.slide_theme = options.theme;
    render_frame(app, w, 0.0f);
    wait_model_slide(app);
  }
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  // toggle: ablation click to the frame drawn (the model panel's numbers, top-3 and grid);
  // toggle_slide: to the first frame whose slide view shows it (its bars: the evaluation batch)
  std::vector<double> frame, ui, toggle, toggle_slide;
  Clock::time_point toggled_at;
  uint64_t slide_wanted = 0;  // the model view's revision the slide view has yet to show
  const double cpu0 = process_cpu_ms();  // whole frame; the UI thread's part before the GL wait
  const double ui_cpu0 = thread_cpu_ms(), raster_cpu0 = rasteriser_cpu_ms();
  const int64_t trained0 = model_training_step(app);
  auto last = Clock::now();
  for (int i = 0; i < options.bench_frames; ++i) {
    const auto t0 = Clock::now();
    const float dt = std::chrono::duration<float>(t0 - last).count();
    last = t0;
    glfwPollEvents();
    // With the model open, knock the first induction head out (or back in) every 20 frames,
    // as a click on its toggle does (panel_model.cpp), then draw the frame. Not while the
    // slide view has yet to show the last one.
    const bool toggled = app.model && i % 20 == 10 && slide_wanted == 0;
    if (toggled) {
      const auto heads = app.model->heads_with_role("induction");
      app.model->toggle(heads.empty() ? model::HeadRef{0, 0} : heads.front());
      show_model_layer(app, app.model_layer);
      toggled_at = t0;
      if (app.presenting_slide) slide_wanted = app.model->revision();
    }
    render_frame(app, w, std::min(dt, 0.1f));
    ui.push_back(ms_since(t0));
    glfwSwapBuffers(w.handle);
    glFinish();  // count the rasteriser's work (llvmpipe runs it on the CPU)
    frame.push_back(ms_since(t0));
    if (toggled) toggle.push_back(frame.back());
    if (slide_wanted && slide_model_revision(app) == slide_wanted) {
      toggle_slide.push_back(ms_since(toggled_at));
      slide_wanted = 0;
    }
  }
  const double cpu_per_frame = (process_cpu_ms() - cpu0) / options.bench_frames;
  const double ui_cpu = (thread_cpu_ms() - ui_cpu0) / options.bench_frames;
  const double raster_cpu = (rasteriser_cpu_ms() - raster_cpu0) / options.bench_frames;
  if (options.train_live)
    std::printf("training live meanwhile: %lld steps logged during the frames, %s\n",
                static_cast<long long>(model_training_step(app) - trained0),
                model_training(app) ? "still running at the end" : "finished or stopped");
  app.timeline.reset();  // stops the run before the window goes
  close_window(w);
  auto pct = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
  };
  // CPU time over all threads (llvmpipe rasterises on worker threads) says what a frame
  // costs even when other processes share the cores and stretch the wall-clock times.
  std::printf("scenario %s: %d frames, median %.2f ms, p95 %.2f ms, max %.2f ms "
              "(UI thread before the GL wait: median %.2f ms; CPU, all threads: %.2f ms/frame)\n",
              options.scenario.c_str(), options.bench_frames, pct(frame, 0.5), pct(frame, 0.95),
              pct(frame, 1.0), pct(ui, 0.5), cpu_per_frame);
  // On a loaded machine the wall-clock times above include waiting for a core; these do not.
  std::printf("  CPU per frame: UI thread %.2f ms, rasteriser threads (llvmpipe) %.2f ms\n", ui_cpu, raster_cpu);
  if (!toggle.empty())
    std::printf("ablation toggle to frame drawn: %zu toggles, median %.2f ms, max %.2f ms\n", toggle.size(),
                pct(toggle, 0.5), pct(toggle, 1.0));
  if (!toggle_slide.empty())
    std::printf("ablation toggle to the slide view showing it: %zu toggles, median %.2f ms, max %.2f ms\n",
                toggle_slide.size(), pct(toggle_slide, 0.5), pct(toggle_slide, 1.0));
  return 0;
}

int run_bench_edit(const Options& options) {
  App app;
  Window w;
  if (!start(app, w, options)) return 2;
  using Clock = std::chrono::steady_clock;
  // As a user: the first edit comes after the app has settled, not within a second of loading.
  const auto loaded = Clock::now();
  app.session.wait_warm();
  const double warm_ms = std::chrono::duration<double, std::milli>(Clock::now() - loaded).count();
  const char* const kinds[] = {"cell", "mask", "bug"};
  std::vector<double> all, by_kind[3], compute;
  int reused = 0;  // edits whose pass took the projections of the run on screen
  for (int i = 0; i < options.bench_edits; ++i) {
    const int kind = i % 3;
    const uint64_t shown = app.data()->generation;
    const auto t0 = Clock::now();
    // What the controls panel does for each edit (panel_controls.cpp), then request().
    MhaConfig& c = app.session.scenario().config;
    if (kind == 0) {
      const int64_t b = std::max<int64_t>(app.batch, 0), t = (i / 3) % c.tq, j = (i * 7) % c.d_model;
      app.session.edits()[{b, t, j}] = 0.5f * static_cast<float>(i % 5) - 1.0f;
    } else if (kind == 1) {
      c.mask.causal = !c.mask.causal;
    } else {
      c.bug = c.bug == Bug::None ? Bug::NoScale : Bug::None;
    }
    app.session.request();
    // As the window's loop: sleep until the run lands (a quarter second at most, then a
    // progress frame), then draw the frame that shows it.
    while (app.data()->generation == shown) {
      app.session.wait_ready(0.25);
      glfwPollEvents();
      render_frame(app, w, 0.0f);
      glfwSwapBuffers(w.handle);
      glFinish();
      if (!app.session.error().empty()) {
        std::fprintf(stderr, "attnsim: %s\n", app.session.error().c_str());
        close_window(w);
        return 2;
      }
    }
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    all.push_back(ms);
    by_kind[kind].push_back(ms);
    compute.push_back(app.data()->compute_ms);
    reused += app.data()->run.trace.reused_head_steps ? 1 : 0;
  }
  close_window(w);
  auto pct = [](std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
  };
  std::printf("scenario %s: %d edits, edit -> first frame showing it: median %.1f ms, p95 %.1f ms, max %.1f ms\n",
              options.scenario.c_str(), options.bench_edits, pct(all, 0.5), pct(all, 0.95), pct(all, 1.0));
  for (int k = 0; k < 3; ++k)
    if (!by_kind[k].empty())
      std::printf("  %-4s edits: %zu, median %.1f ms, p95 %.1f ms\n", kinds[k], by_kind[k].size(),
                  pct(by_kind[k], 0.5), pct(by_kind[k], 0.95));
  std::printf("  of which the forward pass (the worker's compute_ms): median %.1f ms; inputs built %lld, "
              "weights built %lld times in all; projections taken from the run on screen in %d of %d edits\n",
              pct(compute, 0.5), static_cast<long long>(app.session.kept_inputs().inputs_built()),
              static_cast<long long>(app.session.kept_inputs().weights_built()), reused, options.bench_edits);
  std::printf("  buffers for a second pass warmed in the background after loading: %.0f ms\n", warm_ms);
  return 0;
}

int run_without_display(const Options& options, const std::string& why) {
  std::fprintf(stderr, "attnsim: %s: cannot open a window.\n", why.c_str());
  std::fprintf(stderr, "attnsim: exporting the '%s' scenario's slides to ./attnsim-views/ instead\n",
               options.scenario.c_str());
  Options slides = options;
  slides.mode = Mode::ExportSlides;
  slides.output = "attnsim-views";
  slides.force = true;  // the folder is ours: refresh it
  return run_slides_export(slides);
}

}  // namespace attnsim::app
