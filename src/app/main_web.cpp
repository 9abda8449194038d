// attnsim in the browser: the same App and panels as main.cpp, driven by the page's
// requestAnimationFrame loop (emscripten_set_main_loop) instead of GLFW's event loop.
//
// The page's hash is the deep link, read at start and on every hashchange:
//   #scenario=NAME&step=STEP&lang=ko|en      a scenario at a step
//   #lesson=ID&at=K&lang=ko|en               a lesson at step K (1-based, as the panel counts)
//   &log=trace                               also log the run's trace as one JSON line
//   &bench=frames:N[&train=live]             log the median / p95 frame time over N frames
//                                            (and the training steps per second meanwhile)
//   &bench=run:N                             log the median forward-pass time over N recomputes,
//                                            and from each request to the frame showing it
//   #hub=ORG/NAME[@REV]                      Open from Hugging Face… with that name, at once:
//                                            what is stored opens, else it downloads (a link a
//                                            teacher can hand out)
//   &hf_endpoint=URL&hub_timeout=S           the Hub that Open from Hugging Face… asks, and its
//                                            stall timeout (hub_web.js reads them)
// and follows the user: the hash is rewritten (history.replaceState, no reload) as they move.
// Console lines for tests and scripts, one each:
//   attnsim ready: scenario=NAME step=STEP lang=LANG[ lesson=ID at=K]
//   attnsim trace: {...}                      (attnsim --print-trace prints the same JSON)
//   attnsim bench: ...
//   attnsim banner: error|info: TEXT          every banner the app shows
// Between two frames the main loop runs the tasks (tasks.h): recomputes, slices of a
// training run. Files come in through the page's file input and drag and drop (the shell
// writes them into /upload and calls attnsim_open_file) and go out as downloads.
// The page's own files (lessons, checkpoints, fonts) are deflated zips inside it, unpacked to
// the paths the desktop reads them from (unpack_page_files): the first view's at start, the
// rest one per frame once the first view is ready (unpack_later_files; src/app/shell.html
// unpacks them sooner when the app looks into one of their folders).
#include <emscripten.h>
#include <emscripten/html5.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "app/app.h"
#include "app/capture.h"
#include "app/lesson_ui.h"
#include "app/open_files.h"
#include "app/platform.h"
#include "app/ui_scale.h"
#include "app/window.h"
#include "engine/error.h"
#include "engine/read_file.h"
#include "engine/scenario.h"
#include "engine/zip_extract.h"
#include "lessons/progress.h"
#include "model/experiments/hf_bench.h"
#include "model/pass/hf_forward.h"
#include "views/i18n.h"
#include "views/model_view.h"
#include "views/tasks.h"

using namespace attnsim;
using namespace attnsim::app;

namespace {

// [SECTION] the page's hash

struct DeepLink {
  std::string scenario = "start", step, lang, lesson, hub;  // no hash: the start view
  int at = 1;  // 1-based; 0 when the link's at= is not a whole number from 1 to 100000
  bool log_trace = false;
  std::string bench;  // "frames" or "run"
  int bench_n = 0;
  bool train_live = false;
};

std::string url_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i] == '+' ? ' ' : s[i]);
    }
  }
  return out;
}

// A positive count from a hash value, or `fallback` when it is not one.
int positive(const std::string& v, int fallback) {
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  return end && *end == 0 && n >= 1 && n <= 100000 ? static_cast<int>(n) : fallback;
}

DeepLink parse_hash(const std::string& hash) {
  DeepLink link;
  std::stringstream parts(hash.empty() || hash[0] != '#' ? hash : hash.substr(1));
  for (std::string part; std::getline(parts, part, '&');) {
    const size_t eq = part.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = url_decode(part.substr(0, eq)), value = url_decode(part.substr(eq + 1));
    if (key == "scenario") link.scenario = value;
    else if (key == "step") link.step = value;
    else if (key == "lang") link.lang = value;
    else if (key == "lesson") link.lesson = value;
    else if (key == "hub") link.hub = value;
    else if (key == "at") link.at = positive(value, 0);  // 0: not a step number (a banner says so)
    else if (key == "log") link.log_trace = value == "trace";
    else if (key == "train") link.train_live = value == "live";
    else if (key == "bench") {
      const size_t colon = value.find(':');
      link.bench = value.substr(0, colon);
      link.bench_n = colon == std::string::npos ? 100 : positive(value.substr(colon + 1), 100);
    }
  }
  return link;
}

// A string the page made with allocateUTF8 (malloc'd; emscripten 3.1.6 returns pointers
// from JS as ints: wasm32).
char* js_string(int pointer) { return reinterpret_cast<char*>(static_cast<intptr_t>(pointer)); }

std::string page_hash() {
  char* h = js_string(EM_ASM_INT({ return allocateUTF8(location.hash); }));
  std::string s = h ? h : "";
  std::free(h);
  return s;
}

std::string browser_lang() {
  const int ko = EM_ASM_INT({ return (navigator.language || "").toLowerCase().startsWith("ko") ? 1 : 0; });
  return ko ? "ko" : "en";
}

// [SECTION] the page

struct Page {
  Window window;
  App app;
  DeepLink link;
  bool ready_logged = false;
  int frames_since_run = 0;
  double last_frame_ms = 0;
  std::vector<double> frame_ms;
  std::vector<double> cpu_ms;  // of each frame, the part in our code (the rest: the browser's GL and compositor)
  int64_t trained_at_bench_start = 0;
  std::vector<double> run_ms;
  std::vector<double> edit_ms;  // request -> the frame that shows its numbers
  double requested_at = 0;
  uint64_t timed_generation = 0;
  std::string shown_hash;
  std::string progress_saved;  // the progress file's text last copied to localStorage
  int frame = 0;
  bool later_files_waiting = true;  // the shell's zips the first view did not need (unpack_later_files)
};

Page& page() {
  static Page* p = new Page;  // lives as long as the page; never destroyed
  return *p;
}

const char* lang_name() { return ui_lang() == Lang::Ko ? "ko" : "en"; }

void apply_link(Page& p) {
  App& app = p.app;
  ui_lang() = (p.link.lang.empty() ? browser_lang() : p.link.lang) == "ko" ? Lang::Ko : Lang::En;
  p.ready_logged = false;
  p.frames_since_run = 0;
  p.frame_ms.clear();
  p.cpu_ms.clear();
  p.run_ms.clear();
  p.edit_ms.clear();
  p.requested_at = 0;
  app.options.step = p.link.step;
  if (!kTasksHaveThreads) hold_lesson_figures(true);  // released with the ready line (unpack_later_files)
  // A lesson loads its own step's scenario: the default one first would be a pass computed
  // for nothing before the first frame. An unknown lesson falls back to the default.
  if (p.link.lesson.empty() || !open_lesson_by_id(app, p.link.lesson, p.link.at - 1)) {
    const std::string scenario = p.link.lesson.empty() ? p.link.scenario : "default";
    try {
      app_load_scenario(app, scenario);
    } catch (const Error& e) {
      app_load_scenario(app, "default");
      app.show_banner(e.what(), true, 10.0);
    }
  }
  if (!p.link.hub.empty()) open_hub_window(app, p.link.hub, true);
  if (p.link.bench == "frames") {
    app.playback.playing = true;  // frames while the steps animate, as --bench-frames
    app.playback.loop = true;
    app.playback.hold = 0.0f;
    if (p.link.train_live && app.model && start_model_training(app)) open_model_tab(app, "training");
  }
}

// The hash for where the user is now (scenario and step, or lesson and step).
std::string current_hash(const App& app) {
  std::string id;
  int step = 0;
  if (lesson_position(&id, &step))
    return "#lesson=" + id + "&at=" + std::to_string(step + 1) + "&lang=" + lang_name();
  if (app.presenting_start) return std::string("#scenario=start&lang=") + lang_name();
  const Step* s = app.current_step();
  return "#scenario=" + app.session.scenario().name + (s ? "&step=" + s->name : "") + "&lang=" + lang_name();
}

void follow_hash(Page& p) {
  const std::string h = current_hash(p.app);
  if (h == p.shown_hash) return;
  p.shown_hash = h;
  EM_ASM({ history.replaceState(null, "", UTF8ToString($0)); }, h.c_str());
}

// Progress (lessons/progress.h) lives in the page's memory file system: copied to and from
// localStorage so that it outlives the tab.
void restore_progress() {
  char* text = js_string(EM_ASM_INT({
    var t = null;
    try { t = localStorage.getItem("attnsim-progress"); } catch (e) {}
    return t === null ? 0 : allocateUTF8(t);
  }));
  if (!text) return;
  const std::string path = lessons::default_progress_path();
  std::string dir = path.substr(0, path.rfind('/'));
  EM_ASM({ FS.mkdirTree(UTF8ToString($0)); }, dir.c_str());
  std::ofstream(path) << text;
  page().progress_saved = text;
  std::free(text);
}

void keep_progress(Page& p) {
  std::string text;
  try {
    text = read_text_file(lessons::default_progress_path(), int64_t{16} << 20);
  } catch (const Error&) {
    return;  // none saved yet
  }
  if (text == p.progress_saved) return;
  p.progress_saved = std::move(text);
  EM_ASM({ try { localStorage.setItem("attnsim-progress", UTF8ToString($0)); } catch (e) {} },
         p.progress_saved.c_str());
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

// The console lines (see the top of this file), once the deep link's run is on screen.
void log_lines(Page& p) {
  App& app = p.app;
  const RunData* d = app.data();
  const bool shown = d && app.shown_generation == d->generation && !app.session.busy();
  p.frames_since_run = shown ? p.frames_since_run + 1 : 0;
  if (!p.ready_logged && p.frames_since_run >= 2) {  // drawn at least once with it
    p.ready_logged = true;
    const Step* s = app.current_step();
    std::string line = "attnsim ready: scenario=" + (app.presenting_start ? std::string("start") : app.session.scenario().name) + " step=" +
                       (s ? s->name : "none") + " lang=" + lang_name();
    std::string id;
    int step = 0;
    if (lesson_position(&id, &step)) line += " lesson=" + id + " at=" + std::to_string(step + 1);
    std::printf("%s\n", line.c_str());
    EM_ASM({ window.attnsimReadyMs = performance.now(); });  // tests/web/ready_times.py reads it
    if (p.link.log_trace) std::printf("attnsim trace: %s\n", trace_json_text(*d).c_str());
    p.trained_at_bench_start = model_training_step(app);
  }
  if (!p.ready_logged) return;
  if (p.link.bench == "frames" && static_cast<int>(p.frame_ms.size()) < p.link.bench_n) {
    const double now = emscripten_get_now();
    if (p.last_frame_ms > 0) p.frame_ms.push_back(now - p.last_frame_ms);
    if (static_cast<int>(p.frame_ms.size()) == p.link.bench_n) {
      std::printf("attnsim bench: scenario=%s frames=%d median_ms=%.2f p95_ms=%.2f max_ms=%.2f cpu_median_ms=%.2f",
                  app.session.scenario().name.c_str(), p.link.bench_n, percentile(p.frame_ms, 0.5),
                  percentile(p.frame_ms, 0.95), percentile(p.frame_ms, 1.0),
                  p.cpu_ms.empty() ? 0.0 : percentile(p.cpu_ms, 0.5));
      if (p.link.train_live) {
        double seconds = 0;
        for (double ms : p.frame_ms) seconds += ms / 1000.0;
        const int64_t steps = model_training_step(app) - p.trained_at_bench_start;
        std::printf(" train_steps=%lld seconds=%.1f steps_per_s=%.1f", static_cast<long long>(steps), seconds,
                    static_cast<double>(steps) / std::max(seconds, 1e-9));
      }
      std::printf("\n");
    }
  }
  if (p.link.bench == "run" && static_cast<int>(p.run_ms.size()) < p.link.bench_n && shown &&
      d->generation != p.timed_generation) {
    p.timed_generation = d->generation;
    p.run_ms.push_back(d->compute_ms);
    const double now = emscripten_get_now();
    if (p.requested_at > 0) p.edit_ms.push_back(now - p.requested_at);
    if (static_cast<int>(p.run_ms.size()) == p.link.bench_n) {
      std::printf("attnsim bench: scenario=%s runs=%d median_forward_ms=%.1f median_edit_ms=%.1f\n",
                  app.session.scenario().name.c_str(), p.link.bench_n, percentile(p.run_ms, 0.5),
                  p.edit_ms.empty() ? 0.0 : percentile(p.edit_ms, 0.5));
    } else {
      app.session.request();  // the same settings again: a new forward pass, as an edit asks
      p.requested_at = now;
    }
  }
}

// The canvas fills the browser window (the shell's CSS) and has one pixel per device pixel:
// GLFW's window (emscripten's: the canvas's backing size, and the pointer in its pixels) is
// the CSS size times devicePixelRatio, and the interface scales by that ratio (ui_scale.h).
// The browser's zoom changes the ratio, so text follows Ctrl + in the browser too, sharp.
void fit_canvas(Page& p) {
  double css_w = 0, css_h = 0;
  emscripten_get_element_css_size("#canvas", &css_w, &css_h);
  const double ratio = std::clamp(emscripten_get_device_pixel_ratio(), 1.0, 4.0);
  set_content_scale(static_cast<float>(ratio));
  const int want_w = static_cast<int>(std::lround(css_w * ratio)), want_h = static_cast<int>(std::lround(css_h * ratio));
  int w = 0, h = 0;
  glfwGetWindowSize(p.window.handle, &w, &h);
  if (css_w >= 1 && css_h >= 1 && (want_w != w || want_h != h)) glfwSetWindowSize(p.window.handle, want_w, want_h);
}

// The page's own buttons (shell.html) are HTML, outside ImGui: their labels follow the UI's
// language when it changes (the link's lang=, the View menu).
void localize_page_buttons() {
  static int shown = -1;
  const int lang = static_cast<int>(ui_lang());
  if (lang == shown) return;
  shown = lang;
  EM_ASM({
    var set = function(id, text) { var e = document.getElementById(id); if (e) e.textContent = text; };
    set("open-file-label", UTF8ToString($0));
    set("open-folder-label", UTF8ToString($1));
  }, tr("Open file…"), tr("Open folder…"));
}

// After the first view is ready (or a second past the first frame, when it never is): the
// lesson's figures may fill, and one of the shell's waiting zips goes per frame: each a few tens of ms (tools/web_files.py sizes them).
void unpack_later_files(Page& p) {
  if (p.ready_logged || p.frame >= 60) hold_lesson_figures(false);  // the lesson's figures too (apply_link)
  if (!p.later_files_waiting || (!p.ready_logged && p.frame < 60)) return;
  p.later_files_waiting = EM_ASM_INT({ return typeof attnsimUnpackLater === "function" ? attnsimUnpackLater(1) : 0; }) > 0;
}

void frame() {
  Page& p = page();
  localize_page_buttons();
  const double now = emscripten_get_now();
  const float dt = p.last_frame_ms > 0 ? static_cast<float>(std::min((now - p.last_frame_ms) / 1000.0, 0.1)) : 0.0f;
  fit_canvas(p);
  try {
    render_frame(p.app, p.window, dt);
    if (p.app.export_request.pending) {
      p.app.export_request.pending = false;
      ExportRequest r = p.app.export_request;
      r.path = export_path(export_file_name(p.app, r));
      std::string written, error;
      if (capture_png(p.app, r, &written, &error) && deliver_export(written, &error))
        p.app.show_banner(std::string(tr("Saved")) + ": " + written.substr(written.rfind('/') + 1), false);
      else
        p.app.show_banner(std::string(tr("Export failed")) + ": " + error, true, 8.0);
    }
  } catch (const std::exception& e) {  // a frame never takes the page down
    p.app.show_banner(e.what(), true, 10.0);
  }
  log_lines(p);
  p.last_frame_ms = now;
  follow_hash(p);
  if (++p.frame % 30 == 0) keep_progress(p);
  unpack_later_files(p);
  // The tasks between this frame and the next: what is left of a 16 ms frame, at least one
  // call each (a recompute runs whole; a training run gives one step per call).
  const double spent = emscripten_get_now() - now;
  if (p.link.bench == "frames" && p.ready_logged) p.cpu_ms.push_back(spent);
  run_pending_tasks(std::max(2.0, 14.0 - spent));
}

// [SECTION] the page's files

// The lessons, the shipped checkpoints and the fonts come as zips whose entries carry their
// absolute paths (attnsim/lessons/..., usr/share/fonts/...); the page's shell writes the
// first view's to kPageFiles before main() (tools/web_files.py says why zips, and how they
// travel in the page). Each is checked like any other (engine/zip_extract.h), unpacked into
// a scratch folder, and each top-level folder moved to its place, merged into one that
// exists (a waiting zip's folders were made by the first one, with their model.json).
constexpr const char* kPageFiles = "/attnsim-files.zip";

void move_into(const std::filesystem::path& from, const std::filesystem::path& to) {
  namespace fs = std::filesystem;
  if (!fs::exists(to)) {
    fs::rename(from, to);
    return;
  }
  if (!fs::is_directory(from) || !fs::is_directory(to))
    throw Error("the page's file " + to.string() + " is there twice");
  for (const auto& e : fs::directory_iterator(from)) move_into(e.path(), to / e.path().filename());
  fs::remove(from);
}

void unpack_page_files(const char* zip) {
  namespace fs = std::filesystem;
  const fs::path scratch = "/attnsim-files";
  try {
    extract_zip(zip, scratch.string(), int64_t{1} << 30);
    for (const auto& e : fs::directory_iterator(scratch)) move_into(e.path(), "/" / e.path().filename());
    fs::remove(scratch);
    fs::remove(zip);
  } catch (const std::exception& e) {  // the page still opens: no lessons or checkpoints, '?' for Korean
    std::printf("attnsim: the page's files did not unpack: %s\n", e.what());
  }
}

}  // namespace

extern "C" {

// The shell calls these (EXPORTED_FUNCTIONS in src/app/CMakeLists.txt).
EMSCRIPTEN_KEEPALIVE void attnsim_open_file(const char* path) {
  Page& p = page();
  try {
    open_user_path(p.app, path);
  } catch (const std::exception& e) {
    p.app.show_banner(e.what(), true, 10.0);
  }
}

// Scripting: exports the step on screen as its slide ("svg"; "png" captures the slide view),
// as File > Export slide does; the file arrives as a download.
EMSCRIPTEN_KEEPALIVE void attnsim_export_slide(const char* extension) {
  Page& p = page();
  std::string written, error;
  if (std::string(extension) == "png") {
    p.app.presenting_slide = true;
    p.app.export_request = {true, "slide", "", p.app.export_scale, false};
  } else if (export_slide(p.app, extension, &written, &error)) {
    p.app.show_banner(std::string(tr("Saved")) + ": " + written.substr(written.rfind('/') + 1), false);
  } else {
    p.app.show_banner(std::string(tr("Export failed")) + ": " + error, true, 8.0);
  }
}

// Benchmark (tools/bench-page-hub.py): a Hugging Face folder in the page's memory timed as
// `attnsim-cli bench-model --model DIR --length N --layer L --repeats R --decode S` times it
// (model/hf_bench.h, the same code), logged as one line:
//   attnsim bench: model=DIR tokens=N layer=L median_forward_ms=X decode_tokens_per_s=Y
// It blocks the page while it runs, as a benchmark may.
EMSCRIPTEN_KEEPALIVE void attnsim_bench_model(const char* dir, int length, int layer, int repeats, int decode) {
  try {
    const model::hf::HfConfig c = model::hf::read_hf_config(dir);
    const std::vector<int32_t> tokens = model::hf::bench_token_ids(c, length);
    const model::hf::HfModel m = model::hf::load_hf_checked(
        dir, std::max(model::hf::predict_hf_forward_bytes(c, length, false), model::hf::predict_decode_bytes(c, length, decode)),
        0, "benchmarking this model");
    const std::vector<double> fwd = model::hf::time_forward(m, tokens, layer, repeats);
    const std::vector<double> dec = model::hf::time_decode(m, tokens, decode);
    std::printf("attnsim bench: model=%s tokens=%d layer=%d median_forward_ms=%.1f decode_tokens_per_s=%.2f\n", dir, length,
                layer, fwd[fwd.size() / 2], dec.empty() ? 0.0 : 1000.0 / dec[dec.size() / 2]);
  } catch (const std::exception& e) {
    std::printf("attnsim bench: error: %s\n", one_line(e.what()).c_str());
  }
}

// Scripting: File > Open from Hugging Face… with `name` (and `token`, "" for none) typed in
// and Open pressed (the progress shows in its window; the outcome is a banner, on the console
// too).
EMSCRIPTEN_KEEPALIVE void attnsim_hub_open(const char* name, const char* token) {
  open_hub_window(page().app, name, true, token);
}

// The shell: one of its zips, written to `zip` in the page's memory, to unpack now.
EMSCRIPTEN_KEEPALIVE void attnsim_unpack_files(const char* zip) { unpack_page_files(zip); }

EMSCRIPTEN_KEEPALIVE void attnsim_hash_changed() {
  Page& p = page();
  const std::string h = page_hash();
  if (h == p.shown_hash) return;  // our own rewrite
  p.link = parse_hash(h);
  apply_link(p);
}

}  // extern "C"

int main() {
  unpack_page_files(kPageFiles);  // before the App reads a font, a lesson or a checkpoint  // before the App reads a font, a lesson or a checkpoint
  Page& p = page();
  std::string why;
  if (!open_window(p.window, 1440, 900, true, &why)) {
    std::printf("attnsim: %s\n", why.c_str());
    return 1;
  }
  restore_progress();
  p.link = parse_hash(page_hash());
  apply_link(p);
  emscripten_set_main_loop(frame, 0, false);
  return 0;
}
