// FlashAttention as slides and as an animation (figure/flash_figure.h), from the engine's tile
// trace of one (batch, head) of a run: what `--export --slide --panel flash`, lesson steps on
// the flash panel and `--export-gif FILE.gif --panel flash` ("the flash tiles advancing": one
// frame per tile event) draw.
//
//   flash_tile_trace(run, b, h, Br, Bc)   the tiled core on the run's q/k/v heads, events kept
//                                         (the app's flash panel replays the same call)
//   flash_slide(...)                      one event of it as a slide
//   flash_animation(...)                  every event, one frame each
#pragma once

#include <cstdint>

#include "views/gif_scenes.h"
#include "views/session.h"
#include "views/slide_scenes.h"
#include "engine/flash.h"
#include "figure/flash_figure.h"

namespace attnsim::app {

// Br = Bc for a slide: about four tiles per axis (ceil(T / 4)), so the grid shows the walk
// and its skipped tiles at any length (T 6 -> 2, T 64 -> 16: lesson 8's 16 x 16 blocks).
int64_t flash_slide_block(int64_t t);

// The tiled core on (batch, head) of the run's q_heads / k_heads / v_heads, with the run's
// mask and scale (1 with Bug::NoScale, the one bug the tiled path can show), every tile event
// recorded. Throws Error (no heads in the run, batch or head out of range).
FlashCoreResult flash_tile_trace(const RunData& run, int64_t batch, int64_t head, int64_t block_q, int64_t block_k);

figure::FlashWords flash_words(lessons::Lang lang);

// What add_flash_tiles draws of `event` (tokens of `batch` as labels): one input for the
// slide and the working panel (flash_view.h), so both show the same figure.
figure::FlashTiles flash_tiles_input(const RunData& run, const FlashCoreResult& core, int64_t batch, int64_t block_q,
                                     int64_t block_k, size_t event);

// One event as a slide; view.head and view.batch choose the head (-1 batch: the scenario's
// focus). `event` indexes core.events. Without view.caption, a run with a bug the tiled walk
// does not reproduce gets flash_bug_caption (flash_view.h) as its caption.
figure::Figure flash_slide(const Scenario& scenario, const RunData& run, const FlashCoreResult& core, int64_t block_q,
                           int64_t block_k, size_t event, const SlideView& view);
// The slide a view asks for: view.tile (a lesson step's {query block, key block}) or, without
// one, the last event (every tile done, the final m and l).
figure::Figure flash_step_slide(const Scenario& scenario, const RunData& run, const SlideView& view);

// One frame per tile event (visited, skipped and final) of (spec.batch, head 0), spread over
// spec.seconds (at least 0.3 s a frame so the numbers can be read), the last frame held 2 s;
// reduced motion: the first, middle and last events.
Animation flash_animation(const Scenario& scenario, const RunData& run, const AnimationSpec& spec);

}  // namespace attnsim::app
