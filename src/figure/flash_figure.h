// FlashAttention's tile grid as a figure: one (batch, head) of the tiled online softmax at
// one event of the engine's tile trace (engine/flash.h FlashEvent, flash_attention_core with
// record_tiles). Every number drawn is a field of the trace, never recomputed here.
//
//   +-------------------------------+  +-------------------------------------------+
//   |      key tokens               |  | query block 1 · tile (1, 0)   event 4 / 9 |
//   | q  [seen ][seen ][ skip ]     |  | row        m             l        rescale |
//   | t  [seen ][LIT  ][......]     |  | 고양이가  -inf → 0.412  0 → 1.000         |
//   | o  [.....][.....][......]     |  | ...       0.3 → 0.9     1.2 → 2.1   ×0.55 |
//   |  S = Q·Kᵀ·scale, tile by tile |  | fast memory now · slow-memory traffic     |
//   +-------------------------------+  +-------------------------------------------+
//
// Left: the (Tq, Tk) scores as Br x Bc tiles. Tiles visited up to this event show their
// scores S_ij (-inf where the mask hides a cell: the -inf mark), tiles not reached yet are
// blank, wholly hidden tiles are crossed out ("skip"), the event's tile is outlined (a Final
// event outlines the whole query block). Right: the running max m and running sum l per
// query row: the event's block shaded, before -> after this tile, with the rescale factor
// exp(m_old - m_new) where the max rose (highlighted); the other blocks' rows muted, as their
// last event left them (-inf and 0 before their first tile). When every row does not fit,
// only the event's block is listed. Under it, the fast memory this visit holds and the
// slow-memory traffic so far, tiled against standard.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/flash.h"
#include "figure/figure.h"
#include "figure/palette.h"
#include "figure/slide.h"

namespace attnsim::figure {

// The texts of the figure in the slide's language (the app fills Korean ones).
struct FlashWords {
  std::string query_block = "query block", tile = "tile", event = "event", row = "row";
  std::string max_m = "max m", sum_l = "sum l", rescale = "rescale";
  std::string final_division = "final division: out = O / l";
  std::string skipped = "skipped: every score is hidden, nothing is read";
  std::string skip = "skip";
  std::string more_rows = "more rows";  // "… 4 more rows"
  std::string fast_now = "fast memory this visit", traffic = "slow-memory traffic so far";
  std::string tiled = "tiled", standard = "standard", elements = "elements";
  std::string query_tokens = "query tokens", key_tokens = "key tokens";
  std::string grid_caption = "S = Q·K^T·scale, tile by tile";  // (NanumGothic has no ᵀ)
};

// One (batch, head)'s tile trace and what to show of it.
struct FlashTiles {
  const std::vector<FlashEvent>* events = nullptr;  // of one (b, h), in the trace's order
  int64_t tq = 0, tk = 0, block_q = 1, block_k = 1;
  size_t event = 0;                                 // the event shown
  std::vector<std::string> q_tokens, k_tokens;      // row / column labels (may be empty)
};

// Where the numbers went, so tests can read them back against the trace.
struct FlashTilesLayout {
  Rect grid;                        // the score heatmap
  std::vector<int64_t> rows;        // query rows listed: every row when all fit, else the
                                    // event's block (as many as fit)
  std::vector<size_t> m_text, l_text, rescale_text;  // item indices, one per listed row
                                                     // (rescale: SIZE_MAX where not drawn)
  std::vector<Rect> tile_boxes;     // each tile's rectangle, row-major over (q block, k block)
};

// "0.412", "-inf", "NaN": how a running max / sum reads on the slide (3 decimals; %.3g
// outside [0.001, 10000)).
std::string flash_number(float v);

// The (Tq, Tk) colour range every frame of a head shares: [-m, m] over the finite scores of
// all its tiles (so colours do not change while the tiles advance).
float flash_score_range(const std::vector<FlashEvent>& events);

// The index of the Tile event of tile (q_block, k_block) (or its Skipped event); events.size()
// when there is none.
size_t flash_event_of_tile(const std::vector<FlashEvent>& events, int64_t q_block, int64_t k_block);

// Draws the tile grid and the m / l table inside `area`. Throws Error when the trace has no
// events, the event is out of range or the trace's tensors are missing (a GPU trace carries
// no tile scores: those tiles stay blank).
FlashTilesLayout add_flash_tiles(Figure& f, const Theme& th, const Rect& area, const FlashTiles& in,
                                 const FlashWords& words = FlashWords());

// The legend of the grid: the diverging map over [-range, range], -inf when a hidden cell was
// seen by this event.
Legend flash_legend(const FlashTiles& in, const std::string& what);

}  // namespace attnsim::figure
