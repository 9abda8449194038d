#version 330 core
// Pass 1 (once per display, not per frame): colour every cell of a value atlas.
// Output: rgb = the cell's colour, a = what kind of cell it is, so the screen pass
// (heatmap.frag) only adds the screen-space marks:
//   a = 1.0   a finite value
//   a = 0.8   NaN     the figures' NaN grey, drawn cross-hatched
//   a = 0.6   -inf    the figures' -inf near-black, drawn with light "/" stripes
//   a = 0.4   +inf    the figures' +inf near-white, drawn with dots
// (the colours are figure::Theme's mark fills, the patterns the figure sinks' own)
// Colour maps: the figures' own (src/figure/palette.cpp). heatmap_gl.cpp sets u_stops to
// figure::colormap_stops of the map and u_range to figure::colormap_ends of the band, and
// the ramp below interpolates the stops as figure::colormap does, so a tensor on screen has
// the colours of its exported slide:
//   viridis   weights (alpha), 0 .. max
//   PuOr      signed values, -m .. m with white at 0
//   mask      u_mask = 1: stop 0 shown, stop 10 hidden (as the figures draw it: no pattern)
uniform sampler2D u_values;
uniform vec3 u_stops[11];    // figure::kColormapStops
uniform int u_mask;
uniform vec2 u_range;        // lo, hi of the colour scale for the rows being drawn
uniform vec3 u_nan, u_neginf, u_posinf;  // figure::mark_fill of the panel theme

out vec4 colour;

vec3 ramp(float t) {
  t = clamp(t, 0.0, 1.0);
  float x = t * 10.0;
  int i = min(9, int(x));
  return mix(u_stops[i], u_stops[i + 1], x - float(i));
}

void main() {
  float v = texelFetch(u_values, ivec2(gl_FragCoord.xy), 0).r;
  if (isnan(v)) { colour = vec4(u_nan, 0.8); return; }
  if (isinf(v)) { colour = v < 0.0 ? vec4(u_neginf, 0.6) : vec4(u_posinf, 0.4); return; }
  if (u_mask == 1) { colour = v >= 0.5 ? vec4(u_stops[10], 1.0) : vec4(u_stops[0], 1.0); return; }
  colour = vec4(ramp(u_range.y > u_range.x ? (v - u_range.x) / (u_range.y - u_range.x) : 0.5), 1.0);
}
