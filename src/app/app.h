// App: the state every panel reads and the frame that draws them.
//
// A frame is: poll the session for a finished run, advance playback, then each panel
// (panel_*.cpp, one job each) draws itself from App. Panels never compute attention; they
// read the session's last finished run.
#pragma once

#include <imgui.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/display.h"
#include "views/options.h"
#include "views/playback.h"
#include "views/session.h"

namespace attnsim::app {

struct FlashPanelState;  // panel_flash.cpp
struct DecodePanelState;  // panel_decode.cpp
struct ModelPanelState;  // panel_model.cpp
struct TimelinePanelState;  // panel_timeline.cpp
struct ExperimentsPanelState;  // panel_experiments.cpp
class ModelView;         // model_view.h
class HfView;            // hf_view.h
struct HfPanelState;     // panel_hf.cpp
struct HubPanelState;    // panel_hub.cpp

struct Banner {
  std::string text;
  bool error = false;
  double until = 0;  // ImGui time
};

// Zoom and pan of one heatmap view; zoom 1 = fit.
struct ViewState {
  float zoom = 1.0f;
  ImVec2 pan{0, 0};
};

// What the pointer is over, shared by the tensor and memory views so that hovering one
// highlights the other.
struct Hover {
  std::string step;
  int64_t storage = -1;  // storage index hovered, -1 none
};

struct ExportRequest {
  bool pending = false;
  std::string panel = "window";  // or a panel name
  std::string path;              // empty = named after the step
  int scale = 1;
  bool transparent = false;
};

struct App {
  Options options;
  Session session;
  Playback playback;
  DisplayCache displays;
  int64_t batch = 0;
  bool per_head_scale = false;
  ViewState tensor_view;
  Hover hover, next_hover;
  Banner banner;
  ExportRequest export_request;
  int export_scale = 1;
  bool export_transparent = false;
  std::string focused_panel = "tensor";
  std::map<std::string, ImVec4> panel_rects;  // x, y, w, h of each panel this frame
  uint64_t shown_generation = 0;
  bool presenting_bug_lab = false;  // centre shows the bug lab instead of the tensor view
  bool presenting_flash = false;    // centre shows the flash panel
  bool presenting_slide = false;    // centre shows the step as its slide (panel_slide.cpp)
  bool presenting_start = false;    // the whole window is the start view (panel_start.cpp)
  bool show_about = false;          // open Help > About on the next frame (panel_about.cpp)
  std::string slide_theme = "print";  // print | projector (figure/palette.h)
  std::shared_ptr<FlashPanelState> flash;
  // The trained model (scenarios "model", "model-ablate-induction"): the right column shows
  // its head grid; the pipeline, tensor and memory views show layer `model_layer`'s trace.
  std::shared_ptr<ModelView> model;
  std::shared_ptr<ModelPanelState> model_panel;
  std::shared_ptr<TimelinePanelState> timeline;  // training live, and the run's log
  std::shared_ptr<ExperimentsPanelState> experiments;
  int64_t model_layer = 0;
  // A Hugging Face folder (the model scenario with --model DIR holding config.json, or one
  // opened): the right column is its panel; the other views show its chosen layer's trace.
  std::shared_ptr<HfView> hf;
  std::shared_ptr<HfPanelState> hf_panel;
  std::shared_ptr<HubPanelState> hub_panel;  // File > Open from Hugging Face… (null until first opened)
  std::vector<ImVec4> hf_cells;     // its head grid: screen rect of every cell (layer-major, tests)
  std::vector<ImVec4> model_cells;  // head grid: screen rect of every cell (layer-major, tests)
  bool presenting_decode = false;   // centre shows the decode panel (decode scenarios)
  std::shared_ptr<DecodePanelState> decode;
  std::string decode_model_dir;     // the checkpoint a trained decode scenario opened ("" = --model or shipped)
  float decode_overflow = 0;        // px the decode panel's drawing runs past its bottom (tests: 0, it fits)
  float frame_dt = 0;               // seconds since the last frame (panels that animate themselves)
  int settle_frames = 0;            // frames drawn with the model view unsettled (app.cpp settle_model)
  std::string view_error;           // result of "view without contiguous"
  std::string hidden_check;         // result of "check hidden weights are exactly 0"
  bool hidden_check_pass = false;
  int buglab_table_step = -1;       // step the bug lab's NaN table last scrolled to
  int64_t buglab_head = 0;          // the head the bug lab's triptych shows (--head)
  bool headless = false;
  // A click the headless export makes (--click X,Y): the pointer there for 3 frames, pressed
  // in the second, released in the third, as a user's click reaches ImGui.
  ImVec2 click{0, 0};
  int click_frames = 0;
  bool quit = false;
  std::vector<ImVec4> geometry_rows;  // tensor view: screen rect of every block row (tests)
  // Screen rects (x, y, w, h) of figure parts the panels drew this frame, from the figures'
  // own layouts (tests): "flash_grid", "memory_strip", "buglab_bug" (the run with the bug).
  std::map<std::string, ImVec4> figure_rects;

  // The step list of the run on screen and which are active (not skipped).
  const RunData* data() const { return session.data().get(); }
  std::vector<bool> active_steps() const;
  int step_index(const std::string& name) const;
  const Step* current_step() const;
  const Step* step_at(int index) const;
  void show_banner(const std::string& text, bool error, double seconds = 5.0);
};

// Loads the scenario named by options (or "default") and applies its focus step and batch.
// A model scenario opens `model_dir` when given (a lesson step's checkpoint), else --model or
// the shipped model.
void app_load_scenario(App& app, const std::string& name, const std::string& model_dir = "");
// Called once per frame between ImGui::NewFrame() and ImGui::Render().
void app_frame(App& app, float dt);
// The main panels (each in its own file).
void panel_menu(App& app);
void panel_pipeline(App& app, const ImVec4& rect);
void panel_tensor(App& app, const ImVec4& rect);
void panel_memory(App& app, const ImVec4& rect);
void panel_buglab(App& app, const ImVec4& rect);
void panel_flash(App& app, const ImVec4& rect);
// The current step as the exported slide, and File > Export slide (PNG / SVG / PDF by
// extension) through the figure sinks; false with `error` when it fails.
void panel_slide(App& app, const ImVec4& rect);
bool export_slide(App& app, const std::string& extension, std::string* written, std::string* error);
// In a model scenario the slide view builds the model's slide on a worker. The model view's
// revision whose slide the last frame drew (0 while a newer one builds or waits to be
// taken by the next frame), and a wait until the slide shows the model view as it is now
// (headless export, benchmark).
uint64_t slide_model_revision(const App& app);
void wait_model_slide(App& app);
// Puts the flash panel at fraction t (0..1) of its tile events (headless export).
void set_flash_progress(App& app, float t);
// True while the flash panel plays its tiles (the window keeps drawing).
bool flash_playing(const App& app);
// Starts the flash panel's "Measure on this machine" at the run's sizes (the lesson action
// measure-flash, --action measure-flash); wait_flash_measurement blocks until it is done.
void start_flash_measurement(App& app);
void wait_flash_measurement(App& app);
// What the flash panel shows now (its run, head, blocks and event), for the slide view; false
// before the panel has a tile trace.
struct FlashPanelView {
  uint64_t generation = 0;
  int64_t batch = 0, head = 0, block_q = 1, block_k = 1;
  int event = 0;
};
bool flash_panel_view(const App& app, FlashPanelView* view);
void panel_controls(App& app, const ImVec4& rect);
void panel_model(App& app, const ImVec4& rect);
// The Hugging Face panel (panel_hf.cpp), and the view's run on screen in the pipeline, tensor
// and memory views (called when a recompute lands; keeps the step the learner is on).
void panel_hf(App& app, const ImVec4& rect);
void show_hf_layer(App& app);
// The model panel's Training tab (panel_timeline.cpp), drawn inside the current window.
void model_timeline_tab(App& app);
// True while a run trains (the window keeps drawing).
bool model_training(const App& app);
// The last step the run started in the Training tab has logged (0: none yet).
int64_t model_training_step(App& app);
// The model panel's Experiments tab (panel_experiments.cpp); one experiment on a worker.
void model_experiments_tab(App& app);
void run_model_experiment(App& app, const std::string& name);
void wait_model_experiment(App& app);  // blocks until it lands (headless export)
bool experiment_running(const App& app);
// Selects the model panel's tab ("heads", "overview", "sampling", "lens", "training",
// "experiments") on the next frame.
void open_model_tab(App& app, const std::string& tab);
// Frames what a lesson step names (lessons/step_marks.h) in the model panel: the row of the
// last token reading `token` in the sequence on screen, the sampling bar of `bar` ("": none).
void mark_model(App& app, const std::string& token, const std::string& bar);
// Starts a run with the Training tab's settings, as its Start button does (--bench-frames
// --train-live); false and the banner when it is refused.
bool start_model_training(App& app);
// Shows layer `layer` of the model view's run on screen in the pipeline, tensor and memory
// views (keeps the step the learner is on).
void show_model_layer(App& app, int64_t layer);
// Decode scenarios: tokens one by one, the cache strips, the broadcast, alpha, meters.
void panel_decode(App& app, const ImVec4& rect);
bool decode_playing(const App& app);
int decode_frame_count(App& app);
// Shows decode frame `frame` at transition progress t (headless export, slides).
void set_decode_frame(App& app, int frame, float t);
void decode_play(App& app, bool loop);
void panel_banner(App& app);
// The start view (scenario "start", the window's first screen): a sentence through the
// language model, its next-token chart, its heads named, and three doors on.
void panel_start(App& app, const ImVec4& rect);
// Help > About (version, BLAS kernels and their advice), and the menu bar's mark that opens it
// when the kernels are weaker than the CPU.
void panel_about(App& app);
void blas_status_mark(App& app);
// File > Open from Hugging Face… (panel_hub.cpp): the window, and a finished download opened
// in the model scenario (or its error as the banner), with the window shown or not.
void panel_hub(App& app);
// Opens the window with `name` (and `token`, when given) typed in; `start`: as if Open were
// pressed (a window run with --model ORG/NAME, the page's #hub= link and attnsim_hub_open).
void open_hub_window(App& app, const std::string& name, bool start, const std::string& token = "");
// The actions behind the bug lab's and memory panel's buttons (also --action in headless
// export): check hidden weights are exactly 0, jump to the first NaN, try the view.
void buglab_check_hidden(App& app);
void buglab_first_nan(App& app);
void memory_try_view(App& app);

// Batch selector, colour scale and Fit, shared by the tensor panel and the bug lab.
void tensor_toolbar(App& app, ViewState& view);

// Begins a fixed panel window at rect; records the rect for "export panel".
bool begin_panel(App& app, const char* id, const char* title, const ImVec4& rect);
void end_panel();

}  // namespace attnsim::app
