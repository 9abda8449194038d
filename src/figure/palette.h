// Colour maps, themes and the colour-vision check behind them. No drawing here.
//
//   Viridis    weights in [0, 1] (alpha): perceptually uniform, readable with deuteranopia
//              and protanopia, monotone in lightness so it survives grayscale print
//   Cividis    the same job, tuned for CVD (Nuñez, Anderton & Renslow 2018)
//   Diverging  signed values (scores, projections): purple - near-white - orange (ColorBrewer
//              PuOr), a blue-yellow axis that deuteranopes and protanopes keep
//   Mask       two colours: shown / hidden
// Marks for NaN / -inf / +inf are patterns drawn by the sinks (figure.h Mark); their base
// colours come from the theme.
#pragma once

#include <array>
#include <string>

#include "figure/figure.h"

namespace attnsim::figure {

// t in [0, 1] (clamped; NaN gives the low end): linear in sRGB between the map's stops.
Color colormap(ColorMapId map, float t);
const char* colormap_name(ColorMapId map);

// Every map is kColormapStops evenly spaced stops (t = i / 10): colormap() interpolates them,
// and the app's GL shader (shaders/colourize.frag) is given the same stops, so a tensor on
// screen and in an exported slide has the same colours. Mask: stops below t = 0.5 shown,
// the rest hidden.
inline constexpr int kColormapStops = 11;
std::array<Color, kColormapStops> colormap_stops(ColorMapId map);

// The ends of `map`'s scale for finite values in [lo, hi]: [-m, m] (m = max |value|) for
// the diverging map, so 0 is its white middle; [0, hi] for weights, so a small maximum still
// reads as small; [0, 1] for the mask. Never an empty range.
std::array<float, 2> colormap_ends(ColorMapId map, float lo, float hi);

// A light "print" theme and a dark "projector" theme.
struct Theme {
  std::string name;
  Color background, text, muted, accent, frame;
  Color nan, neginf, posinf;     // base colours under the mark patterns
  Color mark_ink;                // the pattern's lines on nan / +inf
  Color mark_ink_dark;           // the pattern's lines on -inf
  Color gap;                     // between heatmap cells
  Color highlight;               // what changed in this frame (a raised running max, the lit tile)
};
const Theme& theme_by_name(const std::string& name);  // "print" | "projector"; throws Error
// The theme for figures drawn on `background` (a working panel inside the app's UI):
// projector on a dark background (relative luminance below mid-grey's 0.18), print on a
// light one.
const Theme& theme_on(Color background);
const Theme& print_theme();
const Theme& projector_theme();

// Colours for categories (heads, K/V groups, sequences): Okabe-Ito, told apart with
// deuteranopia and protanopia and on a washed-out projector; i wraps at 8.
Color category_colour(int64_t i);

// Base colour and pattern ink of a mark under a theme.
Color mark_fill(const Theme& theme, Mark mark);
Color mark_ink(const Theme& theme, Mark mark);

// [SECTION] colour-vision check -----------------------------------------------------------
// Machado, Oliveira & Fernandes (2009), severity 1.0, applied in linear RGB.
enum class Vision { Normal, Deuteranopia, Protanopia };
Color simulate(Vision v, Color c);
// CIE76 colour difference (CIELAB, D65).
double delta_e(Color a, Color b);
// The smallest difference between adjacent stops of an n-stop legend of `map` as seen with
// `v` (the tests require it above a floor).
double min_adjacent_delta_e(ColorMapId map, int stops, Vision v);

}  // namespace attnsim::figure
