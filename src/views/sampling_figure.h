// The sampling chart as a figure (src/figure): one description for the model panels and for
// every export (PNG, SVG, PDF). One row per bar of a SamplingChart, most likely first:
//
//   token label | bar ∝ probs (the kept set in the accent colour, the dropped ones muted) | value
//   the chosen token's row framed, "← chosen" after its value
//
// over a line with the settings (temperature, top-k, top-p, seed) and under it the kept set's
// size and mass. Labels at kLabelMin (28 units) or more, so the panel (scaled to the UI's
// font) and a slide read the same.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "figure/figure.h"
#include "figure/palette.h"
#include "views/i18n.h"
#include "views/sampling_view.h"

namespace attnsim::app {

using TokenLabel = std::function<std::string(int32_t)>;

struct SamplingLayout {
  std::vector<figure::Rect> bars;  // per chart bar: its Box (width ∝ prob); empty where it did not fit
  size_t chosen = 0;               // the chosen bar's index
};

// Appends the chart inside `area`; rows shrink to fit, never below the label size.
SamplingLayout add_sampling_chart(figure::Figure& f, const figure::Theme& theme, const figure::Rect& area,
                                  const SamplingChart& chart, const TokenLabel& label, Lang lang);
// The chart alone, `width` units wide, for a panel.
figure::Figure sampling_view_figure(const SamplingChart& chart, const TokenLabel& label, Lang lang,
                                    const std::string& theme, float width);
// The chart as a slide: `title` over it, the settings' effect as the caption (or `caption`, a
// lesson step's).
figure::Figure sampling_slide(const SamplingChart& chart, const TokenLabel& label, const std::string& title, Lang lang,
                              const std::string& theme, const std::string& caption = "");
// One line of the settings: "temperature 0.8 · top-k 10 · top-p 0.9 · seed 1" (greedy: "greedy").
std::string sampling_settings(const model::SamplingOptions& o, Lang lang);

}  // namespace attnsim::app
