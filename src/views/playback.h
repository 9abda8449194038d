// Playback: which step is shown and how far the transition into it has run. Pure logic,
// no OpenGL; the pipeline panel, the keyboard and headless export drive it.
//
// Stepping skips steps marked skipped. A transition runs from `from` to `step` over
// `duration` seconds scaled by `speed`; pausing freezes it mid-way. When playing, the player
// holds each finished step for `hold` seconds, then moves on, and stops at the last step.
// Reduced motion makes every transition instant.
#pragma once

#include <vector>

namespace attnsim::app {

struct Playback {
  int step = 0;            // index into the trace's steps
  int from = -1;           // transition source step, -1 = none
  float t = 1.0f;          // transition progress 0..1
  bool playing = false;    // auto-advance through the steps
  bool paused = false;     // transition frozen
  float duration = 0.9f;   // seconds per transition at speed 1
  float speed = 1.0f;
  float hold = 0.7f;       // seconds a finished step stays before the next one
  bool reduced_motion = false;
  bool loop = false;       // wrap to the first step (benchmark)
  float held = 0.0f;

  bool animating() const { return t < 1.0f && from >= 0; }
};

// `active[i]` is false for skipped steps. Returns the next / previous active step, or the
// same one at the ends.
int next_step(const std::vector<bool>& active, int step);
int prev_step(const std::vector<bool>& active, int step);

// Jump to a step, starting the transition from the current one.
void go_to(Playback& p, int step, bool animate = true);
// Jump to a step at transition progress t (the scrubber).
void scrub(Playback& p, int from, int step, float t);
// Advance by dt seconds.
void advance(Playback& p, const std::vector<bool>& active, float dt);

}  // namespace attnsim::app
