#version 330 core
// Pass 2 (every frame): draw cells from colour atlases made by colourize.frag, cross-fading
// atlas A into atlas B, and add the marks that must read at any zoom: NaN, -inf and +inf
// get patterns in screen space, so they stay unmistakable on a projector and in grayscale
// print.
in vec2 v_local;
flat in vec4 v_texel_a;
flat in vec4 v_texel_b;
flat in float v_alpha;

uniform sampler2D u_colour_a;
uniform sampler2D u_colour_b;
uniform float u_mix;         // 0 = colours of A, 1 = colours of B
uniform float u_gridline;    // cell size in pixels: borders are drawn once cells are large
uniform float u_opacity;
uniform vec3 u_ink;          // figure::mark_ink of NaN and +inf
uniform vec3 u_ink_dark;     // figure::mark_ink of -inf

out vec4 frag;

float stripes(float period, float width, float dir) {
  float p = mod(gl_FragCoord.x + dir * gl_FragCoord.y, period);
  return p < width ? 1.0 : 0.0;
}

float dots(float period) {
  vec2 q = mod(gl_FragCoord.xy, period) - 0.5 * period;
  return length(q) < 0.25 * period ? 1.0 : 0.0;
}

// The cell's colour with its mark (see colourize.frag for the codes in .a): the figure
// sinks' patterns (figure_imgui.cpp, cairo_sink.cpp) in the theme's ink (figure::mark_ink).
// gl_FragCoord.y grows upwards, so dir -1 draws "/" and +1 draws "\".
vec3 marked(vec4 c) {
  if (c.a > 0.9) return c.rgb;
  if (c.a > 0.7) return mix(c.rgb, u_ink, max(stripes(8.0, 2.2, -1.0), stripes(8.0, 2.2, 1.0)));  // NaN
  if (c.a > 0.5) return mix(c.rgb, u_ink_dark, stripes(8.0, 2.2, -1.0));                             // -inf
  return mix(c.rgb, u_ink, dots(8.0));                                                               // +inf
}

void main() {
  vec2 local = min(v_local, vec2(0.9999));
  vec4 ca = texelFetch(u_colour_a, ivec2(v_texel_a.xy + floor(local * v_texel_a.zw)), 0);
  vec3 c = marked(ca);
  if (u_mix > 0.0) {
    vec4 cb = texelFetch(u_colour_b, ivec2(v_texel_b.xy + floor(local * v_texel_b.zw)), 0);
    c = mix(c, marked(cb), u_mix);
  }
  // One pixel is 1 / u_gridline of a cell.
  if (u_gridline > 6.0) {
    vec2 cell = fract(local * v_texel_a.zw);
    float px = 1.0 / u_gridline;
    if (cell.x < px || cell.y < px) c *= 0.82;
  }
  frag = vec4(c, v_alpha * u_opacity);
}
