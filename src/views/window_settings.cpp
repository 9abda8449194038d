// See window_settings.h.
#include "views/window_settings.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "engine/atomic_file.h"
#include "engine/error.h"
#include "engine/user_dirs.h"
#include "engine/read_file.h"

namespace attnsim::app {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kMaxSettingsBytes = 64 << 10;  // a few dozen bytes are ours
constexpr int kMinSide = 240, kMaxSide = 16384;

bool side_ok(int64_t v) { return v >= kMinSide && v <= kMaxSide; }

}  // namespace

std::string default_window_settings_path() { return (fs::path(user_dir(UserDir::Config)) / "window.json").string(); }

float clamp_text_scale(float s) {
  if (!std::isfinite(s)) return 1.0f;
  const float stepped = std::round(s / kTextScaleStep) * kTextScaleStep;
  return std::clamp(stepped, kMinTextScale, kMaxTextScale);
}

WindowSettings load_window_settings(const std::string& path, std::string* warning) {
  WindowSettings s;
  std::error_code ec;
  if (!fs::exists(path, ec)) return s;
  try {
    const nlohmann::json j = nlohmann::json::parse(read_text_file(path, kMaxSettingsBytes));
    if (!j.is_object()) throw Error("not a JSON object");
    // Read as 64 bits: an int would wrap 2^32 + 1280 to a plausible 1280.
    const int64_t w = j.value("width", int64_t{0}), h = j.value("height", int64_t{0});
    if (side_ok(w) && side_ok(h) && w >= 320) {
      s.width = static_cast<int>(w);
      s.height = static_cast<int>(h);
    }
    s.maximized = j.value("maximized", false);
    const float scale = j.value("text_scale", 1.0f);
    if (j.contains("text_scale") && scale >= kMinTextScale && scale <= kMaxTextScale) {
      s.text_scale = clamp_text_scale(scale);
      s.has_text_scale = true;
    }
  } catch (const std::exception& e) {  // nlohmann's type and parse errors, Error from the read
    if (warning) *warning = "ignoring " + path + " (" + e.what() + "): the window opens at the screen's size";
    return WindowSettings{};
  }
  return s;
}

void save_window_settings(const std::string& path, const WindowSettings& s) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) throw Error("cannot create the folder of " + path + ": " + ec.message());
  const nlohmann::json j = {
      {"width", s.width}, {"height", s.height}, {"maximized", s.maximized}, {"text_scale", s.text_scale}};
  write_file_atomically(path, j.dump() + "\n");
}

float default_text_scale(int height) {
  return height <= 900 ? 1.0f : clamp_text_scale(static_cast<float>(height) / 864.0f);
}

WindowSize fit_window(const WindowSettings& saved, int work_w, int work_h) {
  work_w = std::max(work_w, 320);
  work_h = std::max(work_h, kMinSide);
  if (saved.width > 0 && saved.height > 0 && !saved.maximized)
    return {std::min(saved.width, work_w), std::min(saved.height, work_h), false};
  return {work_w, work_h, true};
}

}  // namespace attnsim::app
