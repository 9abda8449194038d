// The browser's GL state, answered from a shadow instead of asked of WebGL.
//
// Dear ImGui's OpenGL 3 backend saves and restores the GL state around every frame it draws:
// 17 glGetIntegerv and 6 glIsEnabled calls, and the heatmap pass asks 4 more. On the
// desktop these are answered inside the driver. In the browser each is a WebGL getParameter,
// and Chromium answers several of them (viewport, scissor box, blend functions) only after a
// round trip to its GPU process that waits until every command sent before it has run: the
// page's main thread then sits idle while SwiftShader draws the frame. Measured in headless
// Chromium on the 2-core machine: 94 % of the main thread's time in getParameter.
//
// So in the web build every GL call that sets a piece of that state goes through here and is
// remembered, and a query of it is answered from memory; anything not shadowed, and any piece
// not yet set since the context was made, is asked of WebGL once. The shadow is exact as long
// as every state change goes through these names: this header is included by gl.h (the app)
// and force-included into Dear ImGui's backend (src/app/CMakeLists.txt), and nothing else in
// the page calls GL.
#pragma once

#include <GLES3/gl3.h>

extern "C" {
void attnsim_glActiveTexture(GLenum unit);
void attnsim_glBindTexture(GLenum target, GLuint texture);
void attnsim_glDeleteTextures(GLsizei n, const GLuint* textures);
void attnsim_glUseProgram(GLuint program);
void attnsim_glBindBuffer(GLenum target, GLuint buffer);
void attnsim_glDeleteBuffers(GLsizei n, const GLuint* buffers);
void attnsim_glBindVertexArray(GLuint array);
void attnsim_glDeleteVertexArrays(GLsizei n, const GLuint* arrays);
void attnsim_glBindFramebuffer(GLenum target, GLuint framebuffer);
void attnsim_glDeleteFramebuffers(GLsizei n, const GLuint* framebuffers);
void attnsim_glViewport(GLint x, GLint y, GLsizei width, GLsizei height);
void attnsim_glScissor(GLint x, GLint y, GLsizei width, GLsizei height);
void attnsim_glBlendFunc(GLenum src, GLenum dst);
void attnsim_glBlendFuncSeparate(GLenum src_rgb, GLenum dst_rgb, GLenum src_alpha, GLenum dst_alpha);
void attnsim_glBlendEquation(GLenum mode);
void attnsim_glBlendEquationSeparate(GLenum mode_rgb, GLenum mode_alpha);
void attnsim_glEnable(GLenum cap);
void attnsim_glDisable(GLenum cap);
GLboolean attnsim_glIsEnabled(GLenum cap);
void attnsim_glGetIntegerv(GLenum pname, GLint* data);
}

#ifndef ATTNSIM_GL_STATE_IMPL  // gl_state_web.cpp calls the real ones
#define glActiveTexture attnsim_glActiveTexture
#define glBindTexture attnsim_glBindTexture
#define glDeleteTextures attnsim_glDeleteTextures
#define glUseProgram attnsim_glUseProgram
#define glBindBuffer attnsim_glBindBuffer
#define glDeleteBuffers attnsim_glDeleteBuffers
#define glBindVertexArray attnsim_glBindVertexArray
#define glDeleteVertexArrays attnsim_glDeleteVertexArrays
#define glBindFramebuffer attnsim_glBindFramebuffer
#define glDeleteFramebuffers attnsim_glDeleteFramebuffers
#define glViewport attnsim_glViewport
#define glScissor attnsim_glScissor
#define glBlendFunc attnsim_glBlendFunc
#define glBlendFuncSeparate attnsim_glBlendFuncSeparate
#define glBlendEquation attnsim_glBlendEquation
#define glBlendEquationSeparate attnsim_glBlendEquationSeparate
#define glEnable attnsim_glEnable
#define glDisable attnsim_glDisable
#define glIsEnabled attnsim_glIsEnabled
#define glGetIntegerv attnsim_glGetIntegerv
#endif
