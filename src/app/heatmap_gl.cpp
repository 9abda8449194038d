// Heatmap drawing on the GPU. See heatmap_gl.h.
#include "app/heatmap_gl.h"

#include <imgui.h>

#include <algorithm>
#include <string>

#include "app/figure_imgui.h"
#include "app/shaders_embedded.h"
#include "engine/error.h"
#include "figure/palette.h"

namespace attnsim::app {

// [SECTION] textures

AtlasTexture::AtlasTexture(const std::vector<float>& values, int64_t cols, int64_t rows) {
  // texelFetch reads exact cells; NaN and inf survive R32F.
  id_ = new_cell_texture();
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, static_cast<GLsizei>(std::max<int64_t>(cols, 1)),
               static_cast<GLsizei>(std::max<int64_t>(rows, 1)), 0, GL_RED, GL_FLOAT,
               values.empty() ? nullptr : values.data());
}

AtlasTexture AtlasTexture::rgba(int64_t cols, int64_t rows) {
  AtlasTexture t;
  t.id_ = new_cell_texture();
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, static_cast<GLsizei>(std::max<int64_t>(cols, 1)),
               static_cast<GLsizei>(std::max<int64_t>(rows, 1)), 0, GL_RGBA, GL_UNSIGNED_BYTE,
               nullptr);
  return t;
}

AtlasTexture::~AtlasTexture() {
  if (id_) glDeleteTextures(1, &id_);
}

AtlasTexture::AtlasTexture(AtlasTexture&& o) noexcept : id_(o.id_) { o.id_ = 0; }

AtlasTexture& AtlasTexture::operator=(AtlasTexture&& o) noexcept {
  if (this != &o) {
    if (id_) glDeleteTextures(1, &id_);
    id_ = o.id_;
    o.id_ = 0;
  }
  return *this;
}

// [SECTION] program

namespace {

GLuint compile(GLenum type, const char* source, const char* what) {
  const GLuint s = glCreateShader(type);
  glShaderSource(s, 1, &source, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    throw Error(std::string("shader ") + what + " failed to compile: " + log);
  }
  return s;
}

GLuint link(const char* vert, const char* vert_name, const char* frag, const char* frag_name) {
  const GLuint vs = compile(GL_VERTEX_SHADER, vert, vert_name);
  const GLuint fs = compile(GL_FRAGMENT_SHADER, frag, frag_name);
  const GLuint program = glCreateProgram();
  glAttachShader(program, vs);
  glAttachShader(program, fs);
  glLinkProgram(program);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = 0;
  glGetProgramiv(program, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetProgramInfoLog(program, sizeof log, nullptr, log);
    throw Error(std::string(frag_name) + " failed to link: " + log);
  }
  return program;
}

}  // namespace

void HeatmapRenderer::bind_instances(GLuint vbo) {
  glBindBuffer(GL_ARRAY_BUFFER, vbo);
  const auto stride = static_cast<GLsizei>(sizeof(HeatInstance));
  const size_t offsets[5] = {offsetof(HeatInstance, from), offsetof(HeatInstance, to),
                             offsetof(HeatInstance, texel_a), offsetof(HeatInstance, texel_b),
                             offsetof(HeatInstance, alpha)};
  for (GLuint i = 0; i < 5; ++i) {
    glEnableVertexAttribArray(i + 1);
    glVertexAttribPointer(i + 1, i == 4 ? 1 : 4, GL_FLOAT, GL_FALSE, stride,
                          reinterpret_cast<const void*>(offsets[i]));
    glVertexAttribDivisor(i + 1, 1);
  }
}

void HeatmapRenderer::init() {
  program_ = link(kHeatmapVert, "shaders/heatmap.vert", kHeatmapFrag, "shaders/heatmap.frag");
  u_proj_ = glGetUniformLocation(program_, "u_proj");
  u_move_ = glGetUniformLocation(program_, "u_move");
  u_colour_a_ = glGetUniformLocation(program_, "u_colour_a");
  u_colour_b_ = glGetUniformLocation(program_, "u_colour_b");
  u_mix_ = glGetUniformLocation(program_, "u_mix");
  u_gridline_ = glGetUniformLocation(program_, "u_gridline");
  u_opacity_ = glGetUniformLocation(program_, "u_opacity");
  u_ink_ = glGetUniformLocation(program_, "u_ink");
  u_ink_dark_ = glGetUniformLocation(program_, "u_ink_dark");
  colourize_ = link(kColourizeVert, "shaders/colourize.vert", kColourizeFrag,
                    "shaders/colourize.frag");
  c_values_ = glGetUniformLocation(colourize_, "u_values");
  c_range_ = glGetUniformLocation(colourize_, "u_range");
  c_rows_ = glGetUniformLocation(colourize_, "u_rows");
  c_height_ = glGetUniformLocation(colourize_, "u_height");
  c_stops_ = glGetUniformLocation(colourize_, "u_stops");
  c_mask_ = glGetUniformLocation(colourize_, "u_mask");
  c_nan_ = glGetUniformLocation(colourize_, "u_nan");
  c_neginf_ = glGetUniformLocation(colourize_, "u_neginf");
  c_posinf_ = glGetUniformLocation(colourize_, "u_posinf");
  glGenFramebuffers(1, &fbo_);

  glGenVertexArrays(1, &vao_);
  glBindVertexArray(vao_);
  const float corners[8] = {0, 0, 1, 0, 0, 1, 1, 1};  // triangle strip
  glGenBuffers(1, &corner_vbo_);
  glBindBuffer(GL_ARRAY_BUFFER, corner_vbo_);
  glBufferData(GL_ARRAY_BUFFER, sizeof corners, corners, GL_STATIC_DRAW);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
  glGenBuffers(kRing, ring_);
  bind_instances(ring_[0]);
  // Pass 1 reads the corners only.
  glGenVertexArrays(1, &colour_vao_);
  glBindVertexArray(colour_vao_);
  glBindBuffer(GL_ARRAY_BUFFER, corner_vbo_);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
  glBindVertexArray(0);
}

void HeatmapRenderer::shutdown() {
  frame_.clear();
  if (program_) glDeleteProgram(program_);
  if (colourize_) glDeleteProgram(colourize_);
  if (colour_vao_) glDeleteVertexArrays(1, &colour_vao_);
  if (fbo_) glDeleteFramebuffers(1, &fbo_);
  colourize_ = fbo_ = colour_vao_ = 0;
  if (vao_) glDeleteVertexArrays(1, &vao_);
  if (corner_vbo_) glDeleteBuffers(1, &corner_vbo_);
  if (ring_[0]) glDeleteBuffers(kRing, ring_);
  for (GLuint& b : ring_) b = 0;
  program_ = vao_ = corner_vbo_ = 0;
}

// [SECTION] pass 1: colour atlases

AtlasTexture HeatmapRenderer::colourize(const AtlasTexture& values, int64_t cols, int64_t rows,
                                        figure::ColorMapId map, const std::vector<ColourBand>& bands) {
  AtlasTexture out = AtlasTexture::rgba(cols, rows);
  GLint last_fbo = 0, last_viewport[4] = {}, last_program = 0;
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &last_fbo);
  glGetIntegerv(GL_VIEWPORT, last_viewport);
  glGetIntegerv(GL_CURRENT_PROGRAM, &last_program);
  const GLboolean blend = glIsEnabled(GL_BLEND), scissor = glIsEnabled(GL_SCISSOR_TEST);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, out.id(), 0);
  glViewport(0, 0, static_cast<GLsizei>(std::max<int64_t>(cols, 1)),
             static_cast<GLsizei>(std::max<int64_t>(rows, 1)));
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  glUseProgram(colourize_);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, values.id());
  glUniform1i(c_values_, 0);
  // The figures' colours: the map's stops as palette.cpp has them, interpolated the same way.
  const auto stops = figure::colormap_stops(map);
  float rgb[3 * figure::kColormapStops];
  for (size_t i = 0; i < stops.size(); ++i) {
    rgb[3 * i] = stops[i].r;
    rgb[3 * i + 1] = stops[i].g;
    rgb[3 * i + 2] = stops[i].b;
  }
  glUniform3fv(c_stops_, figure::kColormapStops, rgb);
  glUniform1i(c_mask_, map == figure::ColorMapId::Mask ? 1 : 0);
  // The NaN / -inf / +inf cells: the figures' mark colours (heatmap.frag adds their patterns).
  const figure::Theme& th = panel_theme();
  const auto set = [](GLint at, figure::Color c) { glUniform3f(at, c.r, c.g, c.b); };
  set(c_nan_, figure::mark_fill(th, figure::Mark::NaN));
  set(c_neginf_, figure::mark_fill(th, figure::Mark::NegInf));
  set(c_posinf_, figure::mark_fill(th, figure::Mark::PosInf));
  glUniform1f(c_height_, static_cast<float>(std::max<int64_t>(rows, 1)));
  glBindVertexArray(colour_vao_);
  for (const ColourBand& b : bands) {
    const auto ends = figure::colormap_ends(map, b.lo, b.hi);
    glUniform2f(c_range_, ends[0], ends[1]);
    glUniform2f(c_rows_, static_cast<float>(b.row0), static_cast<float>(b.row0 + b.rows));
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  }
  glBindVertexArray(0);
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(last_fbo));
  glViewport(last_viewport[0], last_viewport[1], last_viewport[2], last_viewport[3]);
  glUseProgram(static_cast<GLuint>(last_program));
  if (blend) glEnable(GL_BLEND);
  if (scissor) glEnable(GL_SCISSOR_TEST);
  return out;
}

// [SECTION] pass 2: drawing inside ImGui's render pass

void HeatmapRenderer::queue(ImDrawList* list, HeatmapDraw draw) {
  if (draw.instances.empty()) return;
  frame_.push_back(std::make_unique<HeatmapDraw>(std::move(draw)));
  list->AddCallback(&HeatmapRenderer::callback, frame_.back().get());
  list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

void HeatmapRenderer::end_frame() { frame_.clear(); }

void HeatmapRenderer::callback(const ImDrawList*, const ImDrawCmd* cmd) {
  heatmap_renderer().render(*static_cast<const HeatmapDraw*>(cmd->UserCallbackData), cmd);
}

void HeatmapRenderer::render(const HeatmapDraw& d, const ImDrawCmd* cmd) {
  const RenderTarget& rt = render_target();
  // The scissor of this command, as ImGui's backend computes it for its own draws.
  const float sx = rt.fb_scale[0], sy = rt.fb_scale[1];
  const float fb_h = rt.display_size[1] * sy;
  const float x0 = (cmd->ClipRect.x - rt.display_pos[0]) * sx;
  const float y0 = (cmd->ClipRect.y - rt.display_pos[1]) * sy;
  const float x1 = (cmd->ClipRect.z - rt.display_pos[0]) * sx;
  const float y1 = (cmd->ClipRect.w - rt.display_pos[1]) * sy;
  if (x1 <= x0 || y1 <= y0) return;
  glEnable(GL_SCISSOR_TEST);
  glScissor(static_cast<GLint>(x0), static_cast<GLint>(fb_h - y1), static_cast<GLsizei>(x1 - x0),
            static_cast<GLsizei>(y1 - y0));

  const float L = rt.display_pos[0], R = L + rt.display_size[0];
  const float T = rt.display_pos[1], B = T + rt.display_size[1];
  const float proj[16] = {2 / (R - L), 0, 0, 0, 0, 2 / (T - B), 0, 0, 0, 0, -1, 0,
                          (R + L) / (L - R), (T + B) / (B - T), 0, 1};
  glUseProgram(program_);
  glUniformMatrix4fv(u_proj_, 1, GL_FALSE, proj);
  glUniform1f(u_move_, d.move);
  glUniform1f(u_mix_, d.mix);
  glUniform1f(u_gridline_, d.cell_px * sx);
  glUniform1f(u_opacity_, d.opacity);
  const figure::Theme& th = panel_theme();
  const figure::Color ink = figure::mark_ink(th, figure::Mark::NaN), dark = figure::mark_ink(th, figure::Mark::NegInf);
  glUniform3f(u_ink_, ink.r, ink.g, ink.b);
  glUniform3f(u_ink_dark_, dark.r, dark.g, dark.b);
  glUniform1i(u_colour_a_, 0);
  glUniform1i(u_colour_b_, 1);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, d.colour_a);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, d.colour_b ? d.colour_b : d.colour_a);
  glActiveTexture(GL_TEXTURE0);
  glBindVertexArray(vao_);
  // A buffer from a ring, so this frame never rewrites one the rasteriser may still be
  // reading for an earlier frame (which would make the UI thread wait for it).
  bind_instances(ring_[next_vbo_++ % kRing]);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(d.instances.size() * sizeof(HeatInstance)),
               d.instances.data(), GL_STREAM_DRAW);
  // Opaque draws skip blending: reading back the framebuffer per pixel is a large part of
  // a software rasteriser's cost. ImGui's ResetRenderState callback turns it on again.
  bool opaque = d.opacity >= 1.0f;
  for (const HeatInstance& in : d.instances) opaque = opaque && in.alpha >= 1.0f;
  if (opaque) glDisable(GL_BLEND);
  glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, static_cast<GLsizei>(d.instances.size()));
  glBindVertexArray(0);
}

HeatmapRenderer& heatmap_renderer() {
  static HeatmapRenderer renderer;
  return renderer;
}

RenderTarget& render_target() {
  static RenderTarget target;
  return target;
}

}  // namespace attnsim::app
