#version 330 core
// Pass 1 geometry: a quad over rows [u_rows.x, u_rows.y) of the colour atlas being filled
// (the viewport is the whole atlas; rows are texel rows).
layout(location = 0) in vec2 a_corner;  // (0,0) .. (1,1)
uniform vec2 u_rows;                    // first row, end row
uniform float u_height;                 // rows in the atlas

void main() {
  float y = mix(u_rows.x, u_rows.y, a_corner.y) / u_height;
  gl_Position = vec4(a_corner.x * 2.0 - 1.0, y * 2.0 - 1.0, 0.0, 1.0);
}
