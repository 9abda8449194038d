// Animations as figures: the transition from one step to a later one (view -> transpose ->
// contiguous, a mask bug spreading NaN, ...), one Figure per frame, for --export-gif and
// --export-frames. Cells move between the steps' layouts exactly as in the app (layout.h,
// transition.h): matched by storage offset for views, by index for copies and elementwise
// ops; products form row by row.
#pragma once

#include <string>
#include <vector>

#include "views/session.h"
#include "figure/figure.h"
#include "lessons/lesson.h"

namespace attnsim::app {

struct AnimationSpec {
  std::string from, to;     // step names, from before to in the trace
  int64_t batch = -1;       // -1 = the scenario's focus batch element
  int fps = 12;
  float seconds = 3.0f;
  bool reduced_motion = false;  // three still frames: the first step, the middle one, the last
  lessons::Lang lang = lessons::Lang::En;
  std::string theme = "print";
};

struct Animation {
  std::vector<figure::Figure> frames;
  std::vector<int> delay_cs;  // per frame
};

// The active steps from `from` to `to` along the data (each step's first input); throws Error
// (unknown or skipped step, out of order, `to` not computed from `from`).
std::vector<std::string> animation_path(const RunData& run, const std::string& from, const std::string& to);
// Frames per move between two consecutive steps, and in all: max(2, round(fps x seconds /
// moves)) per move, 3 with reduced motion.
int frames_per_move(int moves, int fps, float seconds);
int animation_frame_count(int moves, int fps, float seconds, bool reduced_motion);

Animation make_animation(const Scenario& scenario, const RunData& run, const AnimationSpec& spec);

// What make_animation will make, predicted from the trace before any frame is made: its
// frame count and the most memory the frames can take as figures (every cell of the largest
// step an item, in every frame). Throws Error as animation_path does.
struct AnimationCost {
  int frames = 0;
  int64_t figure_bytes = 0;
};
AnimationCost animation_cost(const RunData& run, const AnimationSpec& spec);

}  // namespace attnsim::app
