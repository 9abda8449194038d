// Playback: stepping skips skipped steps; transitions pause mid-way; reduced motion is
// instant; play stops at the end.
#include <catch2/catch.hpp>

#include "app/options.h"
#include "app/playback.h"
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
}
