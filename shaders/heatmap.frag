#version 330 core
// Colour maps and the marks for non-finite values.
//   map 0  diverging (signed values): dark blue - white - dark red; lightness tracks |v|, so
//          magnitude survives grayscale print
//   map 1  sequential (probabilities, 0..1): viridis, lightness rises monotonically
//   map 2  bool mask: visible = light grey, hidden = near-black with hatching
//   NaN    magenta with black diagonal stripes
//   -inf   black with grey cross-hatching
//   +inf   orange with black stripes
in vec2 v_local;
flat in vec4 v_texel_a;
flat in vec4 v_texel_b;
flat in float v_alpha;

uniform sampler2D u_atlas_a;
uniform sampler2D u_atlas_b;
uniform int u_map_a;
uniform int u_map_b;
uniform vec2 u_range_a;      // lo, hi of the colour scale
uniform vec2 u_range_b;
uniform float u_mix;         // 0 = colours of A, 1 = colours of B
uniform float u_gridline;    // darken cell borders when cells are large (px of a cell)
uniform float u_opacity;

out vec4 frag;

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

float stripes(float period, float width, float dir) {
  float p = mod(gl_FragCoord.x + dir * gl_FragCoord.y, period);
  return p < width ? 1.0 : 0.0;
}

vec3 colour(float v, int map, vec2 range) {
  if (isnan(v)) return mix(vec3(0.95, 0.0, 0.85), vec3(0.0), stripes(8.0, 3.0, 1.0));
  if (isinf(v) && v < 0.0) {
    float h = max(stripes(7.0, 1.0, 1.0), stripes(7.0, 1.0, -1.0));
    return mix(vec3(0.02), vec3(0.55), h);
  }
  if (isinf(v)) return mix(vec3(1.0, 0.55, 0.0), vec3(0.0), stripes(8.0, 3.0, -1.0));
  if (map == 1) return viridis((v - range.x) / max(range.y - range.x, 1e-20));
  if (map == 2) return v > 0.5 ? mix(vec3(0.08), vec3(0.30), stripes(6.0, 1.5, -1.0))
                               : vec3(0.86);
  return diverging(v, range);
}

void main() {
  ivec2 ta = ivec2(v_texel_a.xy + floor(min(v_local, vec2(0.9999)) * v_texel_a.zw));
  ivec2 tb = ivec2(v_texel_b.xy + floor(min(v_local, vec2(0.9999)) * v_texel_b.zw));
  float va = texelFetch(u_atlas_a, ta, 0).r;
  if (va >= 3.0e38 && !isinf(va)) discard;  // kEmptyCell: no element lives here (layout.h)
  vec3 ca = colour(va, u_map_a, u_range_a);
  vec3 c = ca;
  if (u_mix > 0.0) c = mix(ca, colour(texelFetch(u_atlas_b, tb, 0).r, u_map_b, u_range_b), u_mix);
  // Thin borders between cells once a cell is big enough to read as a cell.
  if (u_gridline > 6.0) {
    vec2 cell = fract(v_local * v_texel_a.zw);
    vec2 px = fwidth(v_local * v_texel_a.zw);
    if (cell.x < px.x || cell.y < px.y) c *= 0.82;
  }
  frag = vec4(c, v_alpha * u_opacity);
}
