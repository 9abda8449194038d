#version 330 core
// Pass 1 (once per display, not per frame): colour every cell of a value atlas.
// Output: rgb = the cell's colour, a = what kind of cell it is, so the screen pass
// (heatmap.frag) only adds the screen-space marks:
//   a = 1.0   a finite value
//   a = 0.8   NaN     magenta, drawn with black diagonal stripes
//   a = 0.6   -inf    near-black, drawn with grey cross-hatching
//   a = 0.4   +inf    orange, drawn with black stripes
//   a = 0.2   bool mask, hidden: near-black, drawn with grey hatching
//   a = 0.0   empty cell (the tail of a wrapped strip): not drawn
// Colour maps:
//   map 0  diverging (signed values): dark blue - white - dark red; lightness tracks |v|,
//          so magnitude survives grayscale print
//   map 1  sequential (probabilities): viridis, lightness rises monotonically
//   map 2  bool mask: visible = light grey, hidden = near-black
uniform sampler2D u_values;
uniform int u_map;
uniform vec2 u_range;        // lo, hi of the colour scale for the rows being drawn

out vec4 colour;

vec3 viridis(float t) {
  t = clamp(t, 0.0, 1.0);
  const vec3 c0 = vec3(0.2777, 0.0054, 0.3341);
  const vec3 c1 = vec3(0.1051, 1.4046, 1.3846);
  const vec3 c2 = vec3(-0.3309, 0.2148, 0.0951);
  const vec3 c3 = vec3(-4.6342, -5.7991, -19.3324);
  const vec3 c4 = vec3(6.2283, 14.1799, 56.6906);
  const vec3 c5 = vec3(4.7764, -13.7451, -65.3530);
  const vec3 c6 = vec3(-5.4355, 4.6459, 26.3124);
  return c0 + t * (c1 + t * (c2 + t * (c3 + t * (c4 + t * (c5 + t * c6)))));
}

vec3 diverging(float v, vec2 range) {
  float m = max(abs(range.x), abs(range.y));
  float s = m > 0.0 ? clamp(v / m, -1.0, 1.0) : 0.0;
  vec3 white = vec3(0.97, 0.97, 0.97);
  vec3 blue = vec3(0.09, 0.25, 0.60);
  vec3 red = vec3(0.65, 0.06, 0.13);
  return s < 0.0 ? mix(white, blue, -s) : mix(white, red, s);
}

void main() {
  float v = texelFetch(u_values, ivec2(gl_FragCoord.xy), 0).r;
  if (isnan(v)) { colour = vec4(0.95, 0.0, 0.85, 0.8); return; }
  if (isinf(v)) { colour = v < 0.0 ? vec4(0.02, 0.02, 0.02, 0.6) : vec4(1.0, 0.55, 0.0, 0.4); return; }
  if (v >= 3.0e38) { colour = vec4(0.0); return; }  // kEmptyCell (layout.h)
  if (u_map == 2) { colour = v > 0.5 ? vec4(0.08, 0.08, 0.08, 0.2) : vec4(0.86, 0.86, 0.86, 1.0); return; }
  if (u_map == 1) { colour = vec4(viridis((v - u_range.x) / max(u_range.y - u_range.x, 1e-20)), 1.0); return; }
  colour = vec4(diverging(v, u_range), 1.0);
}
