// App state and the frame. See app.h.
#include "app/app.h"
#include "app/platform.h"
#include "app/ui_scale.h"

#include <algorithm>
#include <cmath>

#include "views/i18n.h"
#include "app/lesson_ui.h"
#include "views/decode_run.h"
#include "views/hf_view.h"
#include "views/model_view.h"
#include "views/slide_scenes.h"
#include "engine/error.h"
#include "model/experiments/ablate.h"

namespace attnsim::app {

// [SECTION] state queries

std::vector<bool> App::active_steps() const {
  std::vector<bool> active;
  if (const RunData* d = data())
    for (const Step& s : d->run.trace.steps) active.push_back(!s.skipped());
  return active;
}

int App::step_index(const std::string& name) const {
  if (const RunData* d = data())
    for (size_t i = 0; i < d->run.trace.steps.size(); ++i)
      if (d->run.trace.steps[i].name == name) return static_cast<int>(i);
  return -1;
}

const Step* App::step_at(int index) const {
  const RunData* d = data();
  if (!d || index < 0 || index >= static_cast<int>(d->run.trace.steps.size())) return nullptr;
  return &d->run.trace.steps[static_cast<size_t>(index)];
}

const Step* App::current_step() const { return step_at(playback.step); }

void App::show_banner(const std::string& text, bool error, double seconds) {
  note_banner(text, error);
  banner.text = text;
  banner.error = error;
  banner.until = ImGui::GetTime() + seconds;
}

void show_model_layer(App& app, int64_t layer) {
  if (!app.model || !app.model->loaded()) return;
  auto data = app.model->run_data(layer);
  if (!data) return;
  app.model_layer = layer;
  app.session.show(std::move(data), app.session.scenario().name, "alpha");
}

// A Hugging Face folder: from the command line with its --text, --layer and --ablate; the
// first run computed before the panel opens. Throws Error (one line) for a folder, text or
// setting that is refused.
static void load_hf_scenario(App& app, const std::string& name, const std::string& dir, bool from_options) {
  const Options& o = app.options;
  auto view = from_options ? open_hf_view(dir, o.text, o.layer, o.ablate) : open_hf_view(dir, "", -1, "");
  app.model.reset();
  app.hf = std::move(view);
  app.session.show(app.hf->run_data(), name, "alpha");
}

// Opens the trained model: the shipped language model (or --model DIR, or a lesson step's
// checkpoint) on a sentence, a toy model on a repeated sequence;
// "model-ablate-induction" knocks out every head labelled induction. A Hugging Face folder
// opens in its own view. Throws Error (one line naming the file) when the folder does not load.
static void load_model_scenario(App& app, const std::string& name, const std::string& model_dir) {
  // one rule with the exports (slide_scenes.h): --export --scenario model draws this model
  const std::string dir = !model_dir.empty() ? model_dir : scenario_model_dir(app.options.model);
  if (is_hf_folder(dir)) return load_hf_scenario(app, name, dir, model_dir.empty());
  auto view = std::make_shared<ModelView>();
  view->load(dir, true);  // the held-out loss and the means after the first frames (app_frame)
  if (name == "model-ablate-induction") view->set_ablated(view->heads_with_role("induction"));
  // The command line's --text, --ablate and --layer (not a lesson step's checkpoint).
  const Options& o = app.options;
  const bool from_options = model_dir.empty();
  if (from_options && !o.text.empty()) view->set_text(o.text);
  if (from_options && !o.ablate.empty()) view->set_ablated(model::parse_heads(o.ablate, view->model().config));
  const int64_t layers = view->model().config.layers;
  if (from_options && o.layer >= layers)
    throw Error(trf("--layer %lld: this model has layers 0 to %lld", static_cast<long long>(o.layer),
                    static_cast<long long>(layers - 1)));
  app.hf.reset();
  app.model = std::move(view);
  // The layer asked for, else the last (the toy model's induction heads' layer).
  app.model_layer = from_options && o.layer >= 0 ? o.layer : layers - 1;
  auto data = app.model->run_data(app.model_layer);
  app.session.show(std::move(data), name, "alpha");
}

// A decode scenario on the trained model: the decode panel decodes with the checkpoint's
// weights (decode_run.h); the pipeline, tensor and memory views show the checkpoint's last
// layer on the prompt (its induction heads), as the other decode scenarios show the
// prompt's causal pass. Throws Error (one line) when the checkpoint or the prompt is refused.
static void load_trained_decode(App& app, const Scenario& s, const std::string& model_dir) {
  ModelView view;
  app.decode_model_dir = decode_model_dir(s.decode, !model_dir.empty() ? model_dir : app.options.model);
  view.load(app.decode_model_dir);
  view.set_text(s.decode.prompts.at(0));
  auto data = view.run_data(view.model().config.layers - 1);
  const MhaConfig config = data->config;
  app.session.show(std::move(data), s.name, s.focus_step);
  Scenario& shown = app.session.scenario();  // the decode preset, title and summary stay
  shown = s;
  shown.config = config;
}

void app_load_scenario(App& app, const std::string& name, const std::string& model_dir) {
  if (name == "start") {  // the language model, drawn by the start view (panel_start.cpp)
    app.decode_model_dir.clear();
    load_model_scenario(app, "model", model_dir);
    // A gloss the model can finish: after "<|endoftext|>" and it, wordnet-lm-s1 expects " the"
    // 18 %, " a" 7 %, ":" 7 %, " another" 5 % (the start view's chart, as the model view shows it).
    if (app.model && app.options.text.empty()) {
      app.model->set_text("the act of moving from one place to");
      show_model_layer(app, app.model_layer);
    }
  } else if (is_model_scenario(name)) {
    app.decode_model_dir.clear();
    load_model_scenario(app, name, model_dir);
  } else if (const Scenario& s = find_scenario(name); s.decode.trained) {
    app.model.reset();
    app.hf.reset();
    load_trained_decode(app, s, model_dir);
  } else {
    app.model.reset();
    app.hf.reset();
    app.decode_model_dir.clear();
    app.session.load(name);
  }
  app.shown_generation = 0;  // the next run to land applies the scenario's focus
  app.hidden_check.clear();
  app.view_error.clear();
  app.presenting_bug_lab = app.session.scenario().has_reference;
  app.presenting_decode = app.session.scenario().decode.enabled;
  app.presenting_start = name == "start";
}

// [SECTION] frame

namespace {

// A new run landed: keep the step the learner is on, or jump to the scenario's focus.
void on_new_run(App& app) {
  const RunData* d = app.data();
  const bool first = app.shown_generation == 0;
  app.shown_generation = d->generation;
  app.hidden_check.clear();
  const Scenario& s = app.session.scenario();
  if (first) {
    const std::string focus = app.options.step.empty() ? s.focus_step : app.options.step;
    const int idx = app.step_index(focus);
    app.playback.step = idx >= 0 ? idx : 0;
    if (idx < 0 && !app.options.step.empty() && !d->run.trace.steps.empty())  // a link or --step that names none
      app.show_banner(trf("This scenario has no step '%s'; showing '%s' instead.", one_line(app.options.step).c_str(),
                          d->run.trace.steps.front().name.c_str()),
                      true, 10.0);
    app.playback.from = -1;
    app.playback.t = 1.0f;
    app.batch = app.options.batch >= 0 ? app.options.batch : s.focus_batch;
  }
  const int n = static_cast<int>(d->run.trace.steps.size());
  app.playback.step = std::clamp(app.playback.step, 0, std::max(n - 1, 0));
  app.batch = std::clamp<int64_t>(app.batch, 0, std::max<int64_t>(d->config.batch - 1, 0));
}

void handle_keys(App& app) {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  const auto active = app.active_steps();
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow)))
    go_to(app.playback, next_step(active, app.playback.step));
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow)))
    go_to(app.playback, prev_step(active, app.playback.step), false);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space))) {
    if (app.playback.animating())
      app.playback.paused = !app.playback.paused;
    else
      app.playback.playing = !app.playback.playing;
  }
}

// The model view's held-out loss and ablation means (ModelView::settle): measured once the
// window has drawn a few frames with the model, so its first view (the start view, the model
// view, a lesson) is not kept waiting for them (1.1 s in the page).
void settle_model(App& app) {
  if (!app.model || app.model->settled()) {
    app.settle_frames = 0;
    return;
  }
  if (++app.settle_frames >= 3) app.model->settle();
}

// Builds the next step's display (and its transition's matching) while nothing moves, so
// stepping forward does not stall on a large tensor (the article's slices).
void prefetch_next(App& app) {
  const RunData* d = app.data();
  if (!d || app.playback.animating()) return;
  const int next = next_step(app.active_steps(), app.playback.step);
  const Step* s = app.step_at(next);
  if (!s || next == app.playback.step || !s->out.defined()) return;
  const Display& to = app.displays.get(d->generation, 0, *s, app.batch, layout_for_step(s->name));
  const Step* src = s->inputs.empty() ? nullptr : d->run.trace.find(s->inputs[0]);
  const TransitionKind kind = transition_kind(src, *s);
  if (src && src->out.defined() &&
      (kind == TransitionKind::Rearrange || kind == TransitionKind::Copy)) {
    const Display& from =
        app.displays.get(d->generation, 0, *src, app.batch, layout_for_step(src->name));
    app.displays.segments(from, to, kind == TransitionKind::Rearrange);
  }
}

}  // namespace

bool begin_panel(App& app, const char* id, const char* title, const ImVec4& rect) {
  ImGui::SetNextWindowPos({rect.x, rect.y});
  ImGui::SetNextWindowSize({rect.z, rect.w});
  const std::string label = std::string(title) + "###" + id;
  const bool open = ImGui::Begin(label.c_str(), nullptr,
                                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                     ImGuiWindowFlags_NoCollapse |
                                     ImGuiWindowFlags_NoSavedSettings |
                                     ImGuiWindowFlags_NoBringToFrontOnFocus);
  app.panel_rects[id] = rect;
  if (ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows) && ImGui::IsMouseClicked(0))
    app.focused_panel = id;
  return open;
}

void end_panel() { ImGui::End(); }

void app_frame(App& app, float dt) {
  app.frame_dt = dt;
  if (app.hf && app.hf->poll()) show_hf_layer(app);  // a recompute of the Hugging Face view landed
  if (app.session.poll() || (app.data() && app.shown_generation != app.data()->generation))
    on_new_run(app);
  advance(app.playback, app.active_steps(), dt);
  if (!lesson_handle_keys(app)) handle_keys(app);  // presenter mode: the keys drive the lesson
  text_size_keys();  // Ctrl + / Ctrl - / Ctrl 0: applied before the next frame
  app.hover = app.next_hover;
  app.next_hover = {};
  app.figure_rects.clear();

  // The menu bar (with Lessons); while a lesson is open it lays out the panels itself.
  panel_about(app);
  if (lesson_frame(app)) {
    panel_hub(app);
    panel_banner(app);
    return settle_model(app);
  }
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float top = vp->WorkPos.y, w = vp->WorkSize.x, h = vp->WorkSize.y;
  if (app.presenting_start && app.model) {
    panel_start(app, {0, top, w, h});
    panel_hub(app);
    panel_banner(app);
    return settle_model(app);
  }
  const bool model_column = app.model || app.hf;
  // Widths in pixels at 100 % grow with the text size, but never past a share of the window:
  // at 200 % on a 1280-wide projector the three columns still fit side by side.
  const float s = ui_scale();
  const auto fit = [&](float share, float lo, float hi) {
    const float least = std::min(lo * s, w * share * 1.25f);
    return std::clamp(w * share, least, std::max(hi * s, least));
  };
  const float left_w = fit(model_column ? 0.17f : 0.21f, 200.0f, 330.0f);
  // The head grid needs room for heads x a readable heatmap and a row of tokens.
  // Whole pixels: a panel export at 2x is then exactly twice the 1x one.
  const float right_w = model_column ? std::floor(fit(0.46f, 420.0f, 900.0f)) : fit(0.22f, 250.0f, 360.0f);
  const float centre_w = std::max(200.0f, w - left_w - right_w);
  // The decode panel draws tokens, two caches per K/V head, alpha and a meter: it takes more
  // of the height (the memory view below shows the prompt's forward run, secondary there).
  const bool decoding = !app.presenting_slide && !app.presenting_flash && app.presenting_decode &&
                        app.session.scenario().decode.enabled;
  const float tensor_h = std::floor(h * (decoding ? 0.78f : 0.63f));
  panel_pipeline(app, {0, top, left_w, h});
  if (app.presenting_slide)
    panel_slide(app, {left_w, top, centre_w, tensor_h});
  else if (app.presenting_flash)
    panel_flash(app, {left_w, top, centre_w, tensor_h});
  else if (decoding)
    panel_decode(app, {left_w, top, centre_w, tensor_h});
  else if (app.presenting_bug_lab && app.data() && app.data()->has_reference)
    panel_buglab(app, {left_w, top, centre_w, tensor_h});
  else
    panel_tensor(app, {left_w, top, centre_w, tensor_h});
  panel_memory(app, {left_w, top + tensor_h, centre_w, h - tensor_h});
  if (app.hf)
    panel_hf(app, {left_w + centre_w, top, right_w, h});
  else if (app.model)
    panel_model(app, {left_w + centre_w, top, right_w, h});
  else
    panel_controls(app, {left_w + centre_w, top, right_w, h});
  panel_hub(app);
  panel_banner(app);
  prefetch_next(app);
  settle_model(app);
}

void panel_banner(App& app) {
  const bool busy = app.session.busy() && app.session.busy_seconds() > 0.15;
  const bool show = !app.banner.text.empty() && ImGui::GetTime() < app.banner.until;
  if (!busy && !show) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos({vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + 8}, 0, {0.5f, 0});
  ImGui::PushStyleColor(ImGuiCol_WindowBg, app.banner.error && show ? ImVec4(0.55f, 0.08f, 0.08f, 1)
                                                                    : ImVec4(0.12f, 0.25f, 0.40f, 1));
  ImGui::Begin("##banner", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                   ImGuiWindowFlags_NoNav);
  if (show) {
    // Wrapped at a width of its own: TextWrapped in an auto-resizing window wraps at the
    // window's width, which shrinks to fit the text, and drew the banner one glyph wide.
    const float widest = std::max(240.0f, vp->WorkSize.x * 0.6f);
    const float width = std::min(ImGui::CalcTextSize(app.banner.text.c_str()).x, widest);
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
    ImGui::TextUnformatted(app.banner.text.c_str());
    ImGui::PopTextWrapPos();
  }
  if (busy) {
    // The engine gives no progress of its own: show the time so far, bar sweeping.
    const float sweep = static_cast<float>(std::fmod(ImGui::GetTime(), 1.0));
    ImGui::Text("%s… %.1f s", tr("Computing"), app.session.busy_seconds());
    ImGui::ProgressBar(sweep, {260, 0}, "");
  }
  ImGui::End();
  ImGui::PopStyleColor();
}

}  // namespace attnsim::app
