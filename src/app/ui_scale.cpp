// See ui_scale.h.
#include "app/ui_scale.h"

#include <imgui.h>

#include <algorithm>

#include "app/fonts.h"
#include "views/window_settings.h"

namespace attnsim::app {

namespace {

struct Scale {
  float text = 1, content = 1, boost = 1;
  float applied = 0;  // the scale the style and fonts were last built for (0: never)
};

Scale& state() {
  static Scale s;
  return s;
}

// Panels tile the window, so their background is the clear colour (kClearColour) and ImGui
// draws none: on a software rasteriser (llvmpipe) that saves a full-screen blended pass every
// frame. Popups, tooltips and the banner keep their own backgrounds.
void style_for_projector(float scale) {
  ImGuiStyle& s = ImGui::GetStyle();
  s = ImGuiStyle();
  ImGui::StyleColorsDark(&s);
  s.WindowRounding = 0;
  s.FrameRounding = 3;
  s.WindowBorderSize = 1;
  s.Colors[ImGuiCol_WindowBg] = {0, 0, 0, 0};
  s.Colors[ImGuiCol_ChildBg] = {0, 0, 0, 0};
  s.ScaleAllSizes(scale);
}

}  // namespace

float text_scale() { return state().text; }
void set_text_scale(float scale) { state().text = clamp_text_scale(scale); }
void set_content_scale(float scale) { state().content = std::max(1.0f, scale); }
void set_presenter_boost(float boost) { state().boost = std::clamp(boost, 1.0f, 3.0f); }
float ui_scale() { return state().text * state().content * state().boost; }

void apply_ui_scale() {
  const float scale = ui_scale();
  if (scale == state().applied) return;
  state().applied = scale;
  style_for_projector(scale);
  fonts().set_ui_scale(scale);
}

bool text_size_keys() {
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.KeyCtrl || io.WantTextInput) return false;
  // ImGui 1.86's GLFW backend indexes KeysDown by GLFW key code: '=' 61, '-' 45, '0' 48,
  // and the keypad's + 334, - 333, 0 320.
  const auto pressed = [](int key) { return ImGui::IsKeyPressed(key, false); };
  const float before = text_scale();
  if (pressed(61) || pressed(334)) set_text_scale(before + kTextScaleStep);
  if (pressed(45) || pressed(333)) set_text_scale(before - kTextScaleStep);
  if (pressed(48) || pressed(320)) set_text_scale(1.0f);
  return text_scale() != before;
}

}  // namespace attnsim::app
