// Heatmap drawing on the GPU. See heatmap_gl.h.
#include "app/heatmap_gl.h"

#include <imgui.h>

#include <string>

#include "app/shaders_embedded.h"
#include "engine/error.h"

namespace attnsim::app {

// [SECTION] textures

AtlasTexture::AtlasTexture(const std::vector<float>& values, int64_t cols, int64_t rows) {
  glGenTextures(1, &id_);
  glBindTexture(GL_TEXTURE_2D, id_);
  // texelFetch reads exact cells: no filtering, no mipmaps; NaN and inf survive R32F.
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, static_cast<GLsizei>(std::max<int64_t>(cols, 1)),
               static_cast<GLsizei>(std::max<int64_t>(rows, 1)), 0, GL_RED, GL_FLOAT,
               values.empty() ? nullptr : values.data());
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

}  // namespace

void HeatmapRenderer::init() {
  const GLuint vs = compile(GL_VERTEX_SHADER, kHeatmapVert, "shaders/heatmap.vert");
  const GLuint fs = compile(GL_FRAGMENT_SHADER, kHeatmapFrag, "shaders/heatmap.frag");
  program_ = glCreateProgram();
  glAttachShader(program_, vs);
  glAttachShader(program_, fs);
  glLinkProgram(program_);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = 0;
  glGetProgramiv(program_, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetProgramInfoLog(program_, sizeof log, nullptr, log);
    throw Error(std::string("heatmap shader failed to link: ") + log);
  }
  u_proj_ = glGetUniformLocation(program_, "u_proj");
  u_move_ = glGetUniformLocation(program_, "u_move");
  u_atlas_a_ = glGetUniformLocation(program_, "u_atlas_a");
  u_atlas_b_ = glGetUniformLocation(program_, "u_atlas_b");
  u_map_a_ = glGetUniformLocation(program_, "u_map_a");
  u_map_b_ = glGetUniformLocation(program_, "u_map_b");
  u_range_a_ = glGetUniformLocation(program_, "u_range_a");
  u_range_b_ = glGetUniformLocation(program_, "u_range_b");
  u_mix_ = glGetUniformLocation(program_, "u_mix");
  u_gridline_ = glGetUniformLocation(program_, "u_gridline");
  u_opacity_ = glGetUniformLocation(program_, "u_opacity");

  glGenVertexArrays(1, &vao_);
  glBindVertexArray(vao_);
  const float corners[8] = {0, 0, 1, 0, 0, 1, 1, 1};  // triangle strip
  glGenBuffers(1, &corner_vbo_);
  glBindBuffer(GL_ARRAY_BUFFER, corner_vbo_);
  glBufferData(GL_ARRAY_BUFFER, sizeof corners, corners, GL_STATIC_DRAW);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
  glGenBuffers(1, &instance_vbo_);
  glBindBuffer(GL_ARRAY_BUFFER, instance_vbo_);
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
  glBindVertexArray(0);
}

void HeatmapRenderer::shutdown() {
  frame_.clear();
  if (program_) glDeleteProgram(program_);
  if (vao_) glDeleteVertexArrays(1, &vao_);
  if (corner_vbo_) glDeleteBuffers(1, &corner_vbo_);
  if (instance_vbo_) glDeleteBuffers(1, &instance_vbo_);
  program_ = vao_ = corner_vbo_ = instance_vbo_ = 0;
}

// [SECTION] drawing inside ImGui's render pass

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
  glUniform1i(u_map_a_, static_cast<int>(d.map_a));
  glUniform1i(u_map_b_, static_cast<int>(d.map_b));
  glUniform2f(u_range_a_, d.range_a[0], d.range_a[1]);
  glUniform2f(u_range_b_, d.range_b[0], d.range_b[1]);
  glUniform1f(u_gridline_, d.cell_px * sx);
  glUniform1f(u_opacity_, d.opacity);
  glUniform1i(u_atlas_a_, 0);
  glUniform1i(u_atlas_b_, 1);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, d.atlas_a);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, d.atlas_b ? d.atlas_b : d.atlas_a);
  glActiveTexture(GL_TEXTURE0);
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, instance_vbo_);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(d.instances.size() * sizeof(HeatInstance)),
               d.instances.data(), GL_STREAM_DRAW);
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
