// Decode panel: a decode scenario token by token. The picture is the decode slide's figure
// (decode_figure.h add_decode_view), sized to the panel and drawn through the ImGui sink
// (figure_imgui.h), so the panel and the exported decode slides draw one figure:
//   - the tokens, the chosen layer's K/V cache with the broadcast to the query heads, that
//     layer's alpha row per query head, and the memory meters, the paged pool or the
//     by-position plot
//   - while a call plays, its new K and V rows fly from their tokens into the slots they land
//     in (the figure is rebuilt for each frame of the flight)
//   - widgets above it: transport, the call and layer sliders, the policy switch (sinks)
// The figure is sized to the panel, so nothing scrolls at 1280x800.
#include <algorithm>
#include <cstdio>

#include "app/app.h"
#include "views/decode_figure.h"
#include "views/decode_run.h"
#include "app/figure_imgui.h"
#include "views/i18n.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "figure/slide.h"

namespace attnsim::app {

// [SECTION] state

struct DecodePanelState {
  std::string computed_for;  // "scenario|policy|model" the run (or the error) belongs to
  std::string scenario;
  std::string policy;        // the policy switch; empty = the scenario's own
  std::string scenario_policy;  // the scenario's own when the switch was last reset
  DecodeRun run;
  std::string error;
  Playback play;
  int layer = 0;
  // the figure on screen, rebuilt when what it shows changes (the call, the flight, the
  // layer, the panel's size, the theme or the language)
  std::string figure_key;
  figure::Figure figure;
  DecodeLayout layout;
};

namespace {

// The run of the scenario on screen under the chosen policy, computed once per change (an
// error is kept too, so a refused run is not retried every frame).
DecodePanelState& state(App& app) {
  if (!app.decode) app.decode = std::make_shared<DecodePanelState>();
  DecodePanelState& s = *app.decode;
  const Scenario& sc = app.session.scenario();
  const bool new_scenario = s.scenario != sc.name;
  // a new scenario, or a lesson step that sets another policy, opens on its own policy
  if (new_scenario || s.scenario_policy != sc.decode.policy) s.policy.clear();
  s.scenario_policy = sc.decode.policy;
  s.scenario = sc.name;
  const std::string policy = s.policy.empty() ? sc.decode.policy : s.policy;
  const std::string& model_dir = app.decode_model_dir.empty() ? app.options.model : app.decode_model_dir;
  const std::string key = sc.name + "|" + policy + "|" + model_dir;
  if (s.computed_for != key) {
    s.computed_for = key;
    s.error.clear();
    try {
      s.run = run_decode(sc, policy, model_dir);
    } catch (const Error& e) {
      s.error = e.what();
      s.run = {};
      app.show_banner(e.what(), true);
    }
    s.figure_key.clear();
    s.play = {};
    s.play.hold = 0.5f;
    s.play.duration = 0.8f;
    const int last_layer = std::max<int>(static_cast<int>(s.run.config.layers) - 1, 0);
    // the trained model opens on its last layer, where its induction heads are
    s.layer = new_scenario && s.run.trained ? last_layer : std::min(s.layer, last_layer);
  }
  return s;
}

std::vector<bool> all_active(const DecodePanelState& s) { return std::vector<bool>(s.run.frames.size(), true); }

}  // namespace

// [SECTION] the panel

bool decode_playing(const App& app) { return app.decode && (app.decode->play.playing || app.decode->play.animating()); }

int decode_frame_count(App& app) { return static_cast<int>(state(app).run.frames.size()); }

void set_decode_frame(App& app, int frame, float t) {
  DecodePanelState& s = state(app);
  if (s.run.frames.empty()) return;
  frame = std::clamp(frame, 0, static_cast<int>(s.run.frames.size()) - 1);
  scrub(s.play, std::max(frame - 1, 0), frame, frame == 0 ? 1.0f : t);
  s.play.paused = t < 1.0f;
}

void decode_play(App& app, bool loop) {
  DecodePanelState& s = state(app);
  s.play.playing = true;
  s.play.loop = loop;
}

// The figure's height in units below which the panel draws it smaller than the UI's text:
// the tokens, two K/V strips, two alpha rows and the meters at their smallest.
constexpr float kMinHeight = 760;

void panel_decode(App& app, const ImVec4& rect) {
  if (!begin_panel(app, "decode", tr("Decode"), rect)) return end_panel();
  DecodePanelState& s = state(app);
  if (s.run.frames.empty()) {
    ImGui::TextWrapped("%s", s.error.empty() ? tr("Not a decode scenario") : s.error.c_str());
    return end_panel();
  }
  advance(s.play, all_active(s), app.frame_dt);
  const int last = static_cast<int>(s.run.frames.size()) - 1;
  // transport
  if (ImGui::Button("|<")) go_to(s.play, 0, false);
  ImGui::SameLine();
  if (ImGui::Button("<")) go_to(s.play, std::max(s.play.step - 1, 0), false);
  ImGui::SameLine();
  if (ImGui::Button(s.play.playing ? tr("Pause") : tr("Play"))) {
    if (!s.play.playing && s.play.step == last) go_to(s.play, 0, false);
    s.play.playing = !s.play.playing;
  }
  ImGui::SameLine();
  if (ImGui::Button(">")) go_to(s.play, std::min(s.play.step + 1, last));
  ImGui::SameLine();
  if (ImGui::Button(">|")) go_to(s.play, last, false);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::min(220.0f, rect.z * 0.3f));
  int frame = s.play.step;
  if (ImGui::SliderInt("##frame", &frame, 0, last, tr("step %d"))) go_to(s.play, frame, false);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  const int layers = static_cast<int>(s.run.config.layers);
  ImGui::SliderInt("##layer", &s.layer, 0, layers - 1, tr("layer %d"));
  const bool sinks = s.run.config.block_size == 0 && app.session.scenario().decode.policy != "full";
  if (sinks) {
    ImGui::SameLine();
    const std::string preset = app.session.scenario().decode.policy;
    const CachePolicy p = parse_cache_policy(preset);
    const std::string window = "window=" + std::to_string(p.slots(s.run.config.t_max));
    const char* items[] = {"full", window.c_str(), preset.c_str()};
    int current = s.policy == "full" ? 0 : s.policy == window ? 1 : 2;
    ImGui::SetNextItemWidth(150);
    if (ImGui::Combo("##policy", &current, items, 3)) s.policy = items[current];
  }

  const DecodeFrame& f = s.run.frames[static_cast<size_t>(s.play.step)];
  const float t = s.play.animating() ? s.play.t : 1.0f;
  const MhaConfig& a = s.run.config.attn;
  const int64_t G = a.kv_group_count();
  char line[320];
  std::snprintf(line, sizeof line, "%s %d/%d · %s %lld%s · d=%lld h=%lld g=%lld (%s) · %s %s · %s",
                tr("step"), s.play.step, last, tr("position"), static_cast<long long>(f.first_position),
                f.rows > 1 ? (" (" + std::to_string(f.rows) + tr(" rows: prefill") + ")").c_str() : "",
                static_cast<long long>(a.d_model), static_cast<long long>(a.heads), static_cast<long long>(G),
                G == a.heads ? "MHA" : G == 1 ? "MQA" : "GQA", tr("cache"), s.run.config.policy.text().c_str(),
                (tr("used ") + human_bytes(f.used_bytes) + " / " + human_bytes(s.run.storage_bytes)).c_str());
  ImGui::TextWrapped("%s", line);

  // The scale that makes the figure's 28-unit labels the UI's text size, smaller where the
  // panel is too short for the figure's parts at that size.
  const ImVec2 room(ImGui::GetContentRegionAvail().x, ImGui::GetContentRegionAvail().y - ImGui::GetStyle().WindowPadding.y);
  if (room.x < 8 || room.y < 8) return end_panel();
  const float scale = std::max(0.2f, std::min(ImGui::GetFontSize() / figure::kLabelMin, room.y / kMinHeight));
  const lessons::Lang lang = panel_lang();
  char key[160];
  std::snprintf(key, sizeof key, "%d|%d|%.3f|%.0fx%.0f|%s|%d", s.play.step, s.layer, t, room.x, room.y,
                panel_theme().name.c_str(), static_cast<int>(lang));
  if (s.figure_key != key) {
    s.figure_key = key;
    s.figure = {};
    s.figure.width = room.x / scale;
    s.figure.height = room.y / scale;
    s.figure.theme = panel_theme().name;
    s.figure.background = panel_theme().background;
    DecodeFigureSpec spec;
    spec.run = &s.run;
    spec.frame = static_cast<size_t>(s.play.step);
    spec.cache_layer = s.layer;
    spec.flight = t;
    spec.lang = lang;
    s.layout = add_decode_view(s.figure, panel_theme(), {0, 0, s.figure.width, s.figure.height}, spec);
    want_figure_glyphs(s.figure);
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  draw_figure(ImGui::GetWindowDrawList(), s.figure, origin, scale, Backdrop::Window);
  auto screen = [&](const figure::Rect& r) { return ImVec4(origin.x + r.x * scale, origin.y + r.y * scale, r.w * scale, r.h * scale); };
  // (x, y, w, h) of the strips and the plot, for --geometry (tests: the plot fits beside them)
  if (s.run.config.block_size == 0) app.figure_rects["decode_strips"] = screen(s.layout.strips);
  if (s.layout.plot) app.figure_rects["decode_plot"] = screen(s.layout.plot_area);
  const float bottom = origin.y + s.layout.bottom * scale;
  ImGui::Dummy(room);
  app.decode_overflow = bottom - (ImGui::GetWindowPos().y + ImGui::GetWindowHeight() - ImGui::GetStyle().WindowPadding.y);
  end_panel();
}

}  // namespace attnsim::app
