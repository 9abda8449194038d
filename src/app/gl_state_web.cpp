// The browser's GL state shadow. See gl_state_web.h.
#define ATTNSIM_GL_STATE_IMPL
#include "app/gl_state_web.h"

#include <algorithm>
#include <array>

namespace {

// One piece of state: N integers, known once set or asked once.
template <int N>
struct Slot {
  bool known = false;
  std::array<GLint, N> v{};
  void set(std::array<GLint, N> x) {
    v = x;
    known = true;
  }
};

constexpr int kUnits = 32;  // texture units remembered (WebGL 2 guarantees 32 combined)

struct Shadow {
  Slot<1> active_texture, program, array_buffer, vertex_array, framebuffer;
  std::array<Slot<1>, kUnits> texture;  // TEXTURE_BINDING_2D per unit
  Slot<4> viewport, scissor;
  Slot<1> blend_src_rgb, blend_dst_rgb, blend_src_alpha, blend_dst_alpha, blend_eq_rgb, blend_eq_alpha;
  Slot<1> blend, cull_face, depth_test, stencil_test, scissor_test;  // glIsEnabled
};

Shadow& shadow() {
  static Shadow s;
  return s;
}

// The unit glActiveTexture chose, asked once if never set.
int unit() {
  Shadow& s = shadow();
  if (!s.active_texture.known) {
    GLint u = GL_TEXTURE0;
    glGetIntegerv(GL_ACTIVE_TEXTURE, &u);
    s.active_texture.set({u});
  }
  return std::clamp(s.active_texture.v[0] - static_cast<GLint>(GL_TEXTURE0), 0, kUnits - 1);
}

Slot<1>* capability(GLenum cap) {
  Shadow& s = shadow();
  switch (cap) {
    case GL_BLEND: return &s.blend;
    case GL_CULL_FACE: return &s.cull_face;
    case GL_DEPTH_TEST: return &s.depth_test;
    case GL_STENCIL_TEST: return &s.stencil_test;
    case GL_SCISSOR_TEST: return &s.scissor_test;
    default: return nullptr;
  }
}

// A deleted object that is bound stops being bound (GL ES 3.0, 2.10.2 / 3.8.1 / 4.4.1).
void unbind_deleted(Slot<1>& slot, GLsizei n, const GLuint* ids) {
  if (!slot.known) return;
  for (GLsizei i = 0; i < n; ++i)
    if (static_cast<GLuint>(slot.v[0]) == ids[i] && ids[i] != 0) slot.set({0});
}

}  // namespace

extern "C" {

void attnsim_glActiveTexture(GLenum u) {
  glActiveTexture(u);
  shadow().active_texture.set({static_cast<GLint>(u)});
}

void attnsim_glBindTexture(GLenum target, GLuint texture) {
  glBindTexture(target, texture);
  if (target == GL_TEXTURE_2D) shadow().texture[unit()].set({static_cast<GLint>(texture)});
}

void attnsim_glDeleteTextures(GLsizei n, const GLuint* textures) {
  glDeleteTextures(n, textures);
  for (Slot<1>& t : shadow().texture) unbind_deleted(t, n, textures);
}

void attnsim_glUseProgram(GLuint program) {
  glUseProgram(program);
  shadow().program.set({static_cast<GLint>(program)});
}

void attnsim_glBindBuffer(GLenum target, GLuint buffer) {
  glBindBuffer(target, buffer);
  if (target == GL_ARRAY_BUFFER) shadow().array_buffer.set({static_cast<GLint>(buffer)});
}

void attnsim_glDeleteBuffers(GLsizei n, const GLuint* buffers) {
  glDeleteBuffers(n, buffers);
  unbind_deleted(shadow().array_buffer, n, buffers);
}

void attnsim_glBindVertexArray(GLuint array) {
  glBindVertexArray(array);
  shadow().vertex_array.set({static_cast<GLint>(array)});
}

void attnsim_glDeleteVertexArrays(GLsizei n, const GLuint* arrays) {
  glDeleteVertexArrays(n, arrays);
  unbind_deleted(shadow().vertex_array, n, arrays);
}

void attnsim_glBindFramebuffer(GLenum target, GLuint framebuffer) {
  glBindFramebuffer(target, framebuffer);
  // GL_FRAMEBUFFER_BINDING is the draw binding: GL_FRAMEBUFFER and GL_DRAW_FRAMEBUFFER set it.
  if (target == GL_FRAMEBUFFER || target == GL_DRAW_FRAMEBUFFER)
    shadow().framebuffer.set({static_cast<GLint>(framebuffer)});
}

void attnsim_glDeleteFramebuffers(GLsizei n, const GLuint* framebuffers) {
  glDeleteFramebuffers(n, framebuffers);
  unbind_deleted(shadow().framebuffer, n, framebuffers);
}

void attnsim_glViewport(GLint x, GLint y, GLsizei w, GLsizei h) {
  glViewport(x, y, w, h);
  shadow().viewport.set({x, y, w, h});
}

void attnsim_glScissor(GLint x, GLint y, GLsizei w, GLsizei h) {
  glScissor(x, y, w, h);
  shadow().scissor.set({x, y, w, h});
}

void attnsim_glBlendFuncSeparate(GLenum sr, GLenum dr, GLenum sa, GLenum da) {
  glBlendFuncSeparate(sr, dr, sa, da);
  Shadow& s = shadow();
  s.blend_src_rgb.set({static_cast<GLint>(sr)});
  s.blend_dst_rgb.set({static_cast<GLint>(dr)});
  s.blend_src_alpha.set({static_cast<GLint>(sa)});
  s.blend_dst_alpha.set({static_cast<GLint>(da)});
}

void attnsim_glBlendFunc(GLenum src, GLenum dst) { attnsim_glBlendFuncSeparate(src, dst, src, dst); }

void attnsim_glBlendEquationSeparate(GLenum rgb, GLenum alpha) {
  glBlendEquationSeparate(rgb, alpha);
  shadow().blend_eq_rgb.set({static_cast<GLint>(rgb)});
  shadow().blend_eq_alpha.set({static_cast<GLint>(alpha)});
}

void attnsim_glBlendEquation(GLenum mode) { attnsim_glBlendEquationSeparate(mode, mode); }

void attnsim_glEnable(GLenum cap) {
  glEnable(cap);
  if (Slot<1>* c = capability(cap)) c->set({GL_TRUE});
}

void attnsim_glDisable(GLenum cap) {
  glDisable(cap);
  if (Slot<1>* c = capability(cap)) c->set({GL_FALSE});
}

GLboolean attnsim_glIsEnabled(GLenum cap) {
  Slot<1>* c = capability(cap);
  if (!c) return glIsEnabled(cap);
  if (!c->known) c->set({glIsEnabled(cap)});
  return static_cast<GLboolean>(c->v[0]);
}

void attnsim_glGetIntegerv(GLenum pname, GLint* data) {
  Shadow& s = shadow();
  auto answer = [&](auto& slot) {
    if (!slot.known) {
      glGetIntegerv(pname, slot.v.data());
      slot.known = true;
    }
    std::copy(slot.v.begin(), slot.v.end(), data);
  };
  switch (pname) {
    case GL_ACTIVE_TEXTURE: return answer(s.active_texture);
    case GL_CURRENT_PROGRAM: return answer(s.program);
    case GL_TEXTURE_BINDING_2D: return answer(s.texture[unit()]);
    case GL_ARRAY_BUFFER_BINDING: return answer(s.array_buffer);
    case GL_VERTEX_ARRAY_BINDING: return answer(s.vertex_array);
    case GL_FRAMEBUFFER_BINDING: return answer(s.framebuffer);
    case GL_VIEWPORT: return answer(s.viewport);
    case GL_SCISSOR_BOX: return answer(s.scissor);
    case GL_BLEND_SRC_RGB: return answer(s.blend_src_rgb);
    case GL_BLEND_DST_RGB: return answer(s.blend_dst_rgb);
    case GL_BLEND_SRC_ALPHA: return answer(s.blend_src_alpha);
    case GL_BLEND_DST_ALPHA: return answer(s.blend_dst_alpha);
    case GL_BLEND_EQUATION_RGB: return answer(s.blend_eq_rgb);
    case GL_BLEND_EQUATION_ALPHA: return answer(s.blend_eq_alpha);
    default: glGetIntegerv(pname, data);
  }
}

}  // extern "C"
