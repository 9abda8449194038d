// Playback: stepping skips skipped steps; transitions pause mid-way; reduced motion is
// instant; play stops at the end.
#include <catch2/catch.hpp>

#include "views/options.h"
#include "views/playback.h"
#include "views/zoom.h"
#include "engine/error.h"

using namespace attnsim::app;

TEST_CASE("stepping skips steps that do not apply") {
  const std::vector<bool> active = {true, false, true, true, false};
  REQUIRE(next_step(active, 0) == 2);
  REQUIRE(next_step(active, 3) == 3);
  REQUIRE(prev_step(active, 2) == 0);
}

TEST_CASE("a transition can be paused mid-way and resumed") {
  const std::vector<bool> active(4, true);
  Playback p;
  go_to(p, 1);
  REQUIRE(p.from == 0);
  advance(p, active, p.duration / 2);
  REQUIRE(p.t == Approx(0.5f));
  p.paused = true;
  advance(p, active, 10.0f);
  REQUIRE(p.t == Approx(0.5f));
  p.paused = false;
  advance(p, active, 10.0f);
  REQUIRE(p.t == 1.0f);
}

TEST_CASE("reduced motion jumps straight to the step") {
  Playback p;
  p.reduced_motion = true;
  go_to(p, 2);
  REQUIRE(p.t == 1.0f);
}

TEST_CASE("play walks to the last step and stops") {
  const std::vector<bool> active = {true, true, false, true};
  Playback p;
  p.playing = true;
  for (int i = 0; i < 200; ++i) advance(p, active, 0.1f);
  REQUIRE(p.step == 3);
  REQUIRE_FALSE(p.playing);
}

TEST_CASE("headless options parse and reject bad values") {
  const Options o = parse_options({"--export", "x.png", "--scale", "2", "--step", "alpha"});
  REQUIRE(o.mode == Mode::Export);
  REQUIRE(o.scale == 2);
  REQUIRE(o.step == "alpha");
  REQUIRE_THROWS_AS(parse_options({"--scale", "3"}), attnsim::Error);
  REQUIRE_THROWS_AS(parse_options({"--bench-frames"}), attnsim::Error);
  REQUIRE_THROWS_AS(parse_options({"--frobnicate"}), attnsim::Error);
  // The extension says the format, with or without --slide: anything else is refused (a
  // slide was written as PNG bytes into x.gif).
  REQUIRE(parse_options({"--export", "x.svg"}).figure_export());
  REQUIRE(parse_options({"--export", "x.png", "--slide"}).figure_export());
  REQUIRE_THROWS_WITH(parse_options({"--export", "x.gif", "--slide"}),
                      "--export writes .png, .svg or .pdf (by the file's extension), got 'x.gif'");
  REQUIRE_THROWS_AS(parse_options({"--export", "x.txt"}), attnsim::Error);
}

TEST_CASE("zooming keeps the cell under the pointer under the pointer") {
  float zoom = 1, pan_x = 0, pan_y = 0;
  const float fit = 10;               // 10 px per cell at zoom 1
  const float px = 123, py = 77;      // pointer, relative to the view origin
  const float lx = px / fit, ly = py / fit;  // layout point under it
  for (float factor : {1.15f, 1.15f, 2.0f, 0.5f, 3.0f}) {
    zoom_about(zoom, pan_x, pan_y, fit, factor, px, py);
    REQUIRE(pan_x + lx * fit * zoom == Approx(px));
    REQUIRE(pan_y + ly * fit * zoom == Approx(py));
  }
  zoom_about(zoom, pan_x, pan_y, fit, 1000.0f, px, py);
  REQUIRE(zoom == kMaxZoom);
  zoom_about(zoom, pan_x, pan_y, fit, 1e-6f, px, py);
  REQUIRE(zoom == 1.0f);
  REQUIRE(pan_x == 0.0f);  // back to fit
}

TEST_CASE("the sampling and overview panels export as figures, and the sampling settings and the tab actions parse") {
  const Options o = parse_options({"--export", "s.png", "--panel", "sampling", "--temperature", "0.8", "--top-k", "20",
                                   "--top-p", "0.9", "--seed", "3"});
  CHECK(o.figure_export());  // a .png of the chart is its slide: the chart is no window panel
  CHECK(o.temperature == 0.8);
  CHECK(o.top_k == 20);
  CHECK(o.top_p == 0.9);
  CHECK(o.seed == 3);
  CHECK(parse_options({"--export", "o.png", "--panel", "overview"}).figure_export());
  CHECK_FALSE(parse_options({"--export", "m.png", "--panel", "model"}).figure_export());
  CHECK_THROWS_AS(parse_options({"--temperature", "warm"}), attnsim::Error);
  for (const char* a : {"open-overview", "open-sampling", "open-lens"}) CHECK(parse_options({"--action", a}).action == a);
  CHECK_THROWS_AS(parse_options({"--action", "open-heads"}), attnsim::Error);
}
