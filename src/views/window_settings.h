// What the window remembers between runs: its size, whether it was maximized, and the text
// size the learner chose (View > Text size). A small JSON file beside the lesson progress
// ($XDG_CONFIG_HOME/attnsim/window.json, else ~/.config/attnsim/window.json):
//   {"width": 1280, "height": 720, "maximized": false, "text_scale": 1.5}
// Headless runs (exports, benchmarks) neither read nor write it, so their pictures depend on
// their command line only. A damaged file is ignored with one warning; nothing is lost by it.
#pragma once

#include <string>

namespace attnsim::app {

inline constexpr float kMinTextScale = 1.0f, kMaxTextScale = 3.0f, kTextScaleStep = 0.25f;

struct WindowSettings {
  int width = 0, height = 0;  // 0: never saved (open at the screen's work area)
  bool maximized = false;
  float text_scale = 1.0f;
  bool has_text_scale = false;  // the learner chose one (else default_text_scale picks)
};

std::string default_window_settings_path();
// The file's settings, each field checked (a size below 320x240 or a scale outside
// [kMinTextScale, kMaxTextScale] is dropped). A missing file is the defaults, silently; a
// damaged one is the defaults and `warning` says why.
WindowSettings load_window_settings(const std::string& path, std::string* warning);
// Written whole or not at all (engine/atomic_file.h); throws Error naming the path.
void save_window_settings(const std::string& path, const WindowSettings& s);

// A text scale clamped to [kMinTextScale, kMaxTextScale] and rounded to the nearest step
// (Ctrl + / Ctrl -, the menu's 100 % … 300 %); NaN gives 1.
float clamp_text_scale(float s);

// The text size a window `height` pixels tall opens at when none was chosen: 100 % up to
// 900 px (a 1280x720 projector, a laptop), then in proportion (1080 px: 125 %, 1440: 175 %,
// 2160: 250 %), so interface text is not 13 px on a 1080p screen across a classroom.
float default_text_scale(int height);

// The window's size on a screen whose work area (the screen less panels and docks) is
// `work_w` x `work_h`: the saved size when it fits, else the work area.
struct WindowSize {
  int width, height;
  bool maximize;  // no saved size: ask the window manager to maximize too
};
WindowSize fit_window(const WindowSettings& saved, int work_w, int work_h);

}  // namespace attnsim::app
