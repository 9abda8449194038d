// OpenGL 3.3 core entry points. Mesa's libGL exports every core function, so the prototypes
// from glcorearb.h link directly; ImGui's backend uses its own loader for its own calls.
#pragma once

#define GL_GLEXT_PROTOTYPES 1
#include <GL/glcorearb.h>
