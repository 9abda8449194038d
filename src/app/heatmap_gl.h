// Heatmap drawing on the GPU, in two passes with the shaders in shaders/ (embedded at build
// time):
//   1. colourize.vert/.frag, once per display: the value atlas (R32F) becomes a colour atlas
//      (RGBA8, the alpha says finite / NaN / -inf / +inf / hidden / empty)
//   2. heatmap.vert/.frag, every frame: instanced rectangles sample colour atlases, move
//      between layouts, cross-fade, and draw the NaN / inf / hidden marks in screen space
// Colouring once keeps the per-pixel work of an animated frame to one texel fetch, which is
// what a software rasteriser (Mesa llvmpipe under Xvfb) can afford at the article's size.
//
// Drawing happens inside ImGui's render pass: a panel queues a HeatmapDraw into the current
// window's draw list (an ImGui callback), so heatmaps are clipped and layered like any widget
// and are drawn again, at the new scale, when an export re-renders the frame offscreen.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "app/gl.h"
#include "views/layout.h"
#include "figure/figure.h"

struct ImDrawList;
struct ImDrawCmd;

namespace attnsim::app {

// An R32F texture of a layout's value atlas. Move-only; frees the texture.
class AtlasTexture {
 public:
  AtlasTexture() = default;
  AtlasTexture(const std::vector<float>& values, int64_t cols, int64_t rows);  // R32F
  static AtlasTexture rgba(int64_t cols, int64_t rows);                         // RGBA8
  ~AtlasTexture();
  AtlasTexture(AtlasTexture&& o) noexcept;
  AtlasTexture& operator=(AtlasTexture&& o) noexcept;
  AtlasTexture(const AtlasTexture&) = delete;
  AtlasTexture& operator=(const AtlasTexture&) = delete;
  GLuint id() const { return id_; }

 private:
  GLuint id_ = 0;
};

// One instance for the shader (see heatmap.vert): pixel rects and texel rects.
struct HeatInstance {
  float from[4];
  float to[4];
  float texel_a[4];
  float texel_b[4];
  float alpha;
};

struct HeatmapDraw {
  std::vector<HeatInstance> instances;
  GLuint colour_a = 0, colour_b = 0;  // colour atlases (pass 1 output)
  float move = 0;      // position mix
  float mix = 0;       // colour mix
  float cell_px = 0;   // cell size on screen, for grid lines
  float opacity = 1;
};

// Rows [row0, row0 + rows) of an atlas coloured with the scale [lo, hi].
struct ColourBand {
  int64_t row0 = 0, rows = 0;
  float lo = 0, hi = 0;
};

// The shader programs and the instance buffer. One per GL context.
class HeatmapRenderer {
 public:
  // Compiles the embedded shaders; throws attnsim::Error with the GL log on failure.
  void init();
  // Pass 1: a colour atlas for a value atlas, in figure::colormap's colours (the shader gets
  // the map's stops from palette.cpp) on the scale figure::colormap_ends makes of each band's
  // range. Call outside ImGui's render pass.
  AtlasTexture colourize(const AtlasTexture& values, int64_t cols, int64_t rows, figure::ColorMapId map,
                         const std::vector<ColourBand>& bands);
  void shutdown();
  // Queues `draw` into `list` (kept alive until the frame is rendered).
  void queue(ImDrawList* list, HeatmapDraw draw);
  // Drops the draws of the finished frame.
  void end_frame();

 private:
  static void callback(const ImDrawList* list, const ImDrawCmd* cmd);
  void render(const HeatmapDraw& d, const ImDrawCmd* cmd);
  void bind_instances(GLuint vbo);
  static constexpr int kRing = 48;  // instance buffers, used round-robin (several frames' worth)
  GLuint program_ = 0, vao_ = 0, corner_vbo_ = 0;
  GLuint ring_[kRing] = {};
  unsigned next_vbo_ = 0;
  GLint u_proj_ = -1, u_move_ = -1, u_colour_a_ = -1, u_colour_b_ = -1, u_mix_ = -1,
        u_gridline_ = -1, u_opacity_ = -1, u_ink_ = -1, u_ink_dark_ = -1;
  GLuint colourize_ = 0, fbo_ = 0, colour_vao_ = 0;
  GLint c_values_ = -1, c_range_ = -1, c_rows_ = -1, c_height_ = -1, c_stops_ = -1,
        c_mask_ = -1, c_nan_ = -1, c_neginf_ = -1, c_posinf_ = -1;
  std::vector<std::unique_ptr<HeatmapDraw>> frame_;
};

HeatmapRenderer& heatmap_renderer();

// The framebuffer the current ImGui render goes to (window or export FBO); the callback
// needs it for the projection and the scissor.
struct RenderTarget {
  float display_pos[2] = {0, 0};
  float display_size[2] = {1, 1};
  float fb_scale[2] = {1, 1};
};
RenderTarget& render_target();

}  // namespace attnsim::app
