#version 330 core
// One instance = one rectangle of cells moving from a rect to a rect (screen pixels) while
// showing the cells of a texel rect in atlas A and atlas B. A static heatmap block is one
// instance with from == to; a rearranging run of cells is one instance per run.
layout(location = 0) in vec2 a_corner;     // (0,0) .. (1,1)
layout(location = 1) in vec4 i_from;       // x, y, w, h   (pixels, top-left origin)
layout(location = 2) in vec4 i_to;         // x, y, w, h
layout(location = 3) in vec4 i_texel_a;    // col, row, cols, rows in atlas A
layout(location = 4) in vec4 i_texel_b;    // col, row, cols, rows in atlas B
layout(location = 5) in float i_alpha;     // fade of the whole instance (product reveal)

uniform mat4 u_proj;
uniform float u_move;                      // 0 = at i_from, 1 = at i_to

out vec2 v_local;                          // 0..1 across the instance
flat out vec4 v_texel_a;
flat out vec4 v_texel_b;
flat out float v_alpha;

void main() {
  vec4 r = mix(i_from, i_to, u_move);
  vec2 p = r.xy + a_corner * r.zw;
  v_local = a_corner;
  v_texel_a = i_texel_a;
  v_texel_b = i_texel_b;
  v_alpha = i_alpha;
  gl_Position = u_proj * vec4(p, 0.0, 1.0);
}
