// The interface's scale: the learner's text size (View > Text size, Ctrl + / Ctrl - /
// Ctrl 0, --ui-scale) times the screen's content scale (HiDPI, the page's devicePixelRatio is
// the browser's business: its CSS pixels already follow zoom) times presenter mode's boost.
// Fonts, ImGui's spacing and the app's panel widths follow it; every figure sizes its type
// from the font (figure units: kLabelMin = the UI's text size), so figures follow too.
// A change takes effect between frames (fonts are rebuilt there, never inside a frame).
#pragma once

namespace attnsim::app {

inline constexpr float kBaseFontPx = 16.0f;  // the UI's text at 100 %, in logical pixels

float text_scale();                 // the learner's choice: 1 .. 3 in steps of 0.25
void set_text_scale(float scale);   // clamped (window_settings.h); applied before the next frame
void set_content_scale(float scale);  // the monitor's (glfwGetWindowContentScale), >= 1
void set_presenter_boost(float boost);  // 1 off; presenter mode enlarges the whole view
// What fonts, style and layouts use: text * content * presenter boost.
float ui_scale();
// Applies a changed scale to the font atlas and ImGui's style. Call between frames.
void apply_ui_scale();
// Ctrl + (or Ctrl =), Ctrl -, Ctrl 0: one step larger, smaller, back to 100 %. Returns true
// when a key changed the size.
bool text_size_keys();

}  // namespace attnsim::app
