// OpenGL entry points: 3.3 core on the desktop (Mesa's libGL exports every core function, so
// the prototypes from glcorearb.h link directly; ImGui's backend uses its own loader for its
// own calls), OpenGL ES 3.0 in the browser (WebGL 2, emscripten's GLES3 headers). The app
// calls only what both have.
#pragma once

#ifdef __EMSCRIPTEN__
#include "app/gl_state_web.h"  // GLES3, with the state queries answered from a shadow
#else
#define GL_GLEXT_PROTOTYPES 1
#include <GL/glcorearb.h>
#endif

// A new 2D texture, bound, that samples exact cells: nearest texel, no mipmaps, clamped at
// the edges (a heatmap cell is never blended with its neighbour). The caller fills it.
inline GLuint new_cell_texture() {
  GLuint id = 0;
  glGenTextures(1, &id);
  glBindTexture(GL_TEXTURE_2D, id);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  return id;
}
