// The window's remembered size and text size (views/window_settings.h) and the options that
// set the interface's scale (--ui-scale, --window, --version).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "engine/error.h"
#include "views/options.h"
#include "views/window_settings.h"

using namespace attnsim::app;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const char* name) {
  const fs::path dir = fs::temp_directory_path() / "attnsim-window-settings";
  fs::create_directories(dir);
  return dir / name;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

}  // namespace

TEST_CASE("window settings are saved and read back; damaged files are ignored with a warning") {
  const fs::path p = scratch("window.json");
  fs::remove(p);
  std::string warning;
  WindowSettings s = load_window_settings(p.string(), &warning);
  CHECK(warning.empty());
  CHECK(s.width == 0);
  CHECK_FALSE(s.has_text_scale);

  save_window_settings(p.string(), {1100, 650, false, 1.75f, true});
  s = load_window_settings(p.string(), &warning);
  CHECK(warning.empty());
  CHECK(s.width == 1100);
  CHECK(s.height == 650);
  CHECK(s.text_scale == 1.75f);
  CHECK(s.has_text_scale);

  write(p, "{\"width\": 1100, \"height\": 650, \"text_scale\": 40}");  // out of range: dropped
  s = load_window_settings(p.string(), &warning);
  CHECK(s.width == 1100);
  CHECK(s.text_scale == 1.0f);
  CHECK_FALSE(s.has_text_scale);

  write(p, "{\"width\": 99999999, \"height\": -3}");  // hostile sizes: dropped
  s = load_window_settings(p.string(), &warning);
  CHECK(s.width == 0);
  CHECK(s.height == 0);

  write(p, "{\"width\": 4294968576, \"height\": 720}");  // 2^32 + 1280 must not wrap to 1280
  s = load_window_settings(p.string(), &warning);
  CHECK(s.width == 0);
  CHECK(s.height == 0);

  write(p, "not json");
  s = load_window_settings(p.string(), &warning);
  CHECK(s.width == 0);
  CHECK(warning.find("ignoring") != std::string::npos);

  write(p, "{\"width\": \"wide\"}");  // a wrong type is a warning too, never a throw
  warning.clear();
  s = load_window_settings(p.string(), &warning);
  CHECK(s.width == 0);
  CHECK_FALSE(warning.empty());
}

TEST_CASE("window settings in an unwritable place are one error and leave nothing") {
  const fs::path blocker = scratch("a-file");
  write(blocker, "x");
  CHECK_THROWS_AS(save_window_settings((blocker / "window.json").string(), {}), attnsim::Error);
}

TEST_CASE("the window fits the work area: a saved size that fits or else the whole work area") {
  WindowSettings saved;
  WindowSize w = fit_window(saved, 1280, 690);  // never saved: the work area, maximized
  CHECK(w.width == 1280);
  CHECK(w.height == 690);
  CHECK(w.maximize);
  saved.width = 1440;
  saved.height = 900;  // saved on a larger screen, opened on a 720p projector
  w = fit_window(saved, 1280, 690);
  CHECK(w.width == 1280);
  CHECK(w.height == 690);
  CHECK_FALSE(w.maximize);
  w = fit_window(saved, 1920, 1050);
  CHECK(w.width == 1440);
  CHECK(w.height == 900);
}

TEST_CASE("the text scale moves in steps of 25 % from 100 % to 300 % with a default by the screen height") {
  CHECK(clamp_text_scale(1.1f) == 1.0f);
  CHECK(clamp_text_scale(1.9f) == 2.0f);
  CHECK(clamp_text_scale(0.2f) == 1.0f);
  CHECK(clamp_text_scale(9.0f) == 3.0f);
  CHECK(clamp_text_scale(std::numeric_limits<float>::quiet_NaN()) == 1.0f);
  CHECK(default_text_scale(720) == 1.0f);
  CHECK(default_text_scale(1080) == 1.25f);
  CHECK(default_text_scale(2160) == 2.5f);
}

TEST_CASE("the interface options parse (--ui-scale --window --version) and bad values are one error") {
  Options o = parse_options({"--ui-scale", "2"});
  CHECK(o.ui_scale == 2.0f);
  CHECK_FALSE(o.scenario_given);
  o = parse_options({"--export", "x.png", "--window", "1280x720", "--scenario", "start"});
  CHECK(o.window_width == 1280);
  CHECK(o.window_height == 720);
  CHECK(o.scenario_given);
  CHECK(parse_options({"--version"}).mode == Mode::Version);
  for (const char* bad : {"0.5", "3.5", "2x", "nan", "inf", ""})
    CHECK_THROWS_AS(parse_options({"--ui-scale", bad}), attnsim::Error);
  for (const char* bad : {"1280", "100x100", "99999999999x720", "1280x-720", "x"})
    CHECK_THROWS_AS(parse_options({"--window", bad}), attnsim::Error);
}
