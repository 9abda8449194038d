// Decode scenarios as slides (figures, src/figure): a title page, then one slide per decode
// call (the prefill, then one per token), drawn from the decode panel's run (decode_run.h).
// A slide is the decode view (decode_figure.h, what the decode panel draws) with:
//   the cache of layer 0 (the trained model's last layer, where its induction heads read)
//   the call's alpha for EVERY layer, one block per layer
//   a title, a caption (the block tables, the slots a rolling cache holds, or how much weight
//     the trained model's induction head puts after the token's earlier copy) and a legend
// Why every layer's alpha but one layer's cache: every layer's cache has the same slots and the
// same append (only the numbers differ), while what each layer attends to is what differs (the
// trained model: previous-token heads in layer 0, induction heads in layer 1). A slide per layer
// per call would double the deck and split one decode call over several pages.
#pragma once

#include <optional>
#include <string>

#include "views/decode_run.h"
#include "views/gif_scenes.h"
#include "views/slide_scenes.h"
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
// A lesson step's slide gives its own title and caption (empty: the call's). `flight` < 1:
// the call's new K/V rows on their way into their slots (decode_figure.h).
DecodeSlide decode_slide(const Scenario& scenario, const DecodeRun& run, size_t frame, lessons::Lang lang,
                         const std::string& theme, const std::string& title = "", const std::string& caption = "",
                         float flight = 1.0f);
// The title page plus one slide per decode call.
// A trained scenario opens `model_dir` (the shipped checkpoint when empty).
Deck decode_deck(const Scenario& scenario, lessons::Lang lang, const std::string& theme,
                 const std::string& model_dir = "");

// Decode calls `from` .. `to` as an animation (--export-gif / --export-frames --panel decode):
// per call after `from`, its new K/V rows fly into their slots (frames_per_move frames, the
// last landed), then the slide holds; reduced motion: three landed calls (first, middle,
// last). Throws Error for a call that is not a number of the run, or `from` not before `to`.
Animation decode_animation(const Scenario& scenario, const AnimationSpec& spec, const std::string& model_dir = "");

}  // namespace attnsim::app
