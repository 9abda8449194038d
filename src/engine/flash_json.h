// The tile trace as JSON: the format of `attnsim-cli flash --dump DIR` (DIR/tiles.json) and
// what the CUDA flash kernel's events are compared against.
//
//   {"shape": {"batch","heads","tq","tk","head_dim","block_q","block_k","q_blocks","k_blocks"},
//    "scale", "threads", "tiles_total", "tiles_visited", "tiles_skipped",
//    "io_tiled": {"reads","writes"}, "io_standard": {"reads","writes"},   (elements)
//    "fast_bytes", "core_bytes", "standard_core_bytes",
//    "events": [{"kind": "tile"|"skipped"|"final", "b","h","q_block","k_block","q0","rows",
//                "k0","cols", tile: "scores" [[rows x cols]], "m_before","m_after","rescale",
//                "l_before","l_after" [rows], "probs" [[rows x cols]], "acc" [[rows x dk]];
//                final: "m","l" [rows], "out" [[rows x dk]];
//                every kind: "fast_bytes","held_bytes","io","io_standard"}]}
// Numbers are written with 9 significant digits (float32 round-trips); JSON has no -inf or
// NaN, so those are the strings "-inf", "inf" and "nan".
// The file is streamed: nothing the size of the trace is built in memory.
#pragma once

#include <ostream>

#include "flash.h"

namespace attnsim {

void write_flash_tiles_json(std::ostream& out, const FlashCoreResult& result, double scale);

}  // namespace attnsim
