// Decode scenarios as slides (figures, src/figure): a title page, then one slide per decode
// call (the prefill, then one per token), drawn from the decode panel's run (decode_run.h).
// One slide, top to bottom:
//   the tokens fed so far (this call's outlined, evicted ones struck through, the next one)
//   one layer's K and V cache (layer 0; the trained model's last layer, where its induction
//     heads read): per KV head a K strip over a V strip of every preallocated slot by d_k; the
//     slots this call wrote are outlined; lines to the query heads that read it through the
//     stride-0 view (k_grouped), each query head in its group's colour
//   the call's alpha row per query head over the slots for EVERY layer, one block per layer,
//     with the position each slot holds; on the trained model the slot after the token's
//     earlier copy is outlined and the caption says how much weight an induction head puts there
//   paged: the block table of every sequence and the free list in the caption
//   an evicting policy: the query heads move next to the strips and the by-position plot
//     takes the right of the slide (random weights: each position's output drift from the
//     full cache; trained: each position's next-token loss with every key, a plain window of
//     as many slots and the policy, the legend with each one's mean from the first eviction,
//     as the decode panel draws them), up to the call's last position
// Why every layer's alpha but one layer's cache: every layer's cache has the same slots and the
// same append (only the numbers differ), while what each layer attends to is what differs (the
// trained model: previous-token heads in layer 0, induction heads in layer 1). A slide per layer
// per call would double the deck and split one decode call over several pages.
#pragma once

#include <optional>
#include <string>

#include "app/decode_run.h"
#include "app/slide_scenes.h"
#include "figure/plot.h"

namespace attnsim::app {

// A decode slide and, where it has one, where its by-position plot went: series [full
// (trained weights only), plain window (unless the policy is one), policy], one point per
// position up to the call's last; marker [first eviction]. Tests map the drawn points back.
struct DecodeSlide {
  figure::Figure figure;
  std::optional<figure::PlotLayout> plot;
};

// The slide of decode call `frame` (0 = the prefill). Throws Error for a frame out of range.
// A lesson step's slide gives its own title and caption (empty: the call's).
DecodeSlide decode_slide(const Scenario& scenario, const DecodeRun& run, size_t frame, lessons::Lang lang,
                            const std::string& theme, const std::string& title = "", const std::string& caption = "");
// The title page plus one slide per decode call.
// A trained scenario opens `model_dir` (the shipped checkpoint when empty).
Deck decode_deck(const Scenario& scenario, lessons::Lang lang, const std::string& theme,
                 const std::string& model_dir = "");

}  // namespace attnsim::app
