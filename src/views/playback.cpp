// Playback: see playback.h.
#include "views/playback.h"

#include <algorithm>

namespace attnsim::app {

int next_step(const std::vector<bool>& active, int step) {
  for (int i = step + 1; i < static_cast<int>(active.size()); ++i)
    if (active[static_cast<size_t>(i)]) return i;
  return step;
}

int prev_step(const std::vector<bool>& active, int step) {
  for (int i = step - 1; i >= 0; --i)
    if (active[static_cast<size_t>(i)]) return i;
  return step;
}

void go_to(Playback& p, int step, bool animate) {
  if (step == p.step && !p.animating()) return;
  p.from = p.step;
  p.step = step;
  p.t = animate && !p.reduced_motion ? 0.0f : 1.0f;
  p.held = 0.0f;
}

void scrub(Playback& p, int from, int step, float t) {
  p.from = from;
  p.step = step;
  p.t = std::clamp(t, 0.0f, 1.0f);
  p.held = 0.0f;
}

void advance(Playback& p, const std::vector<bool>& active, float dt) {
  if (p.t < 1.0f) {
    if (p.paused) return;
    const float len = p.duration / std::max(p.speed, 0.05f);
    p.t = p.reduced_motion ? 1.0f : std::min(1.0f, p.t + dt / std::max(len, 1e-3f));
    return;
  }
  if (!p.playing) return;
  p.held += dt * std::max(p.speed, 0.05f);
  if (p.held < p.hold) return;
  int next = next_step(active, p.step);
  if (next == p.step) {
    if (!p.loop) {
      p.playing = false;
      return;
    }
    next = 0;
    while (next < static_cast<int>(active.size()) && !active[static_cast<size_t>(next)]) ++next;
  }
  go_to(p, next);
}

}  // namespace attnsim::app
