// Heatmap drawing on the GPU: value atlases as R32F textures, coloured by the shaders in
// shaders/ (heatmap.vert / heatmap.frag, embedded at build time).
//
// Drawing happens inside ImGui's render pass: a panel queues a HeatmapDraw into the current
// window's draw list (an ImGui callback), so heatmaps are clipped and layered like any widget
// and are drawn again, at the new scale, when an export re-renders the frame offscreen.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "app/gl.h"
#include "app/layout.h"

struct ImDrawList;
struct ImDrawCmd;

namespace attnsim::app {

enum class ColourMap : int { Diverging = 0, Sequential = 1, Bool = 2 };

// An R32F texture of a layout's value atlas. Move-only; frees the texture.
class AtlasTexture {
 public:
  AtlasTexture() = default;
  AtlasTexture(const std::vector<float>& values, int64_t cols, int64_t rows);
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
  GLuint atlas_a = 0, atlas_b = 0;
  ColourMap map_a = ColourMap::Diverging, map_b = ColourMap::Diverging;
  float range_a[2] = {-1, 1}, range_b[2] = {-1, 1};
  float move = 0;      // position mix
  float mix = 0;       // colour mix
  float cell_px = 0;   // cell size on screen, for grid lines
  float opacity = 1;
};

// The shader program and the instance buffer. One per GL context.
class HeatmapRenderer {
 public:
  // Compiles the embedded shaders; throws attnsim::Error with the GL log on failure.
  void init();
  void shutdown();
  // Queues `draw` into `list` (kept alive until the frame is rendered).
  void queue(ImDrawList* list, HeatmapDraw draw);
  // Drops the draws of the finished frame.
  void end_frame();

 private:
  static void callback(const ImDrawList* list, const ImDrawCmd* cmd);
  void render(const HeatmapDraw& d, const ImDrawCmd* cmd);
  GLuint program_ = 0, vao_ = 0, corner_vbo_ = 0, instance_vbo_ = 0;
  GLint u_proj_ = -1, u_move_ = -1, u_atlas_a_ = -1, u_atlas_b_ = -1, u_map_a_ = -1,
        u_map_b_ = -1, u_range_a_ = -1, u_range_b_ = -1, u_mix_ = -1, u_gridline_ = -1,
        u_opacity_ = -1;
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
