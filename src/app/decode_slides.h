// Decode scenarios as slides (figures, src/figure): a title page, then one slide per decode
// call (the prefill, then one per token), drawn from the decode panel's run (decode_run.h).
// One slide, top to bottom:
//   the tokens fed so far (this call's outlined, evicted ones struck through, the next one)
//   layer 0's K cache: per KV head a strip of every preallocated slot by d_k; the slots this
//     call wrote are outlined; lines to the query heads that read it through the stride-0
//     view (k_grouped), each query head in its group's colour
//   the call's alpha row per query head over the slots, with the position each slot holds
//   paged: the block table of every sequence and the free list in the caption
#pragma once

#include <string>

#include "app/decode_run.h"
#include "app/slide_scenes.h"

namespace attnsim::app {

// The slide of decode call `frame` (0 = the prefill). Throws Error for a frame out of range.
figure::Figure decode_slide(const Scenario& scenario, const DecodeRun& run, size_t frame, lessons::Lang lang,
                            const std::string& theme);
// The title page plus one slide per decode call.
Deck decode_deck(const Scenario& scenario, lessons::Lang lang, const std::string& theme);

}  // namespace attnsim::app
