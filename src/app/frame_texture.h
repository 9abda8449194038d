// Images drawn frame after frame: a grid of colours (a heatmap's blocks) uploaded as one
// texture and drawn with ImDrawList::AddImage as one quad.
//
// Why a texture: thousands of cells as separate rectangles cost the UI thread their vertices
// and the software rasteriser (Mesa llvmpipe under Xvfb) their triangles; the memory strip
// alone was 40 000 vertices a frame. As a texture it is four.
// Why kept by content: a working panel draws the same figure every frame, so an image whose
// key (a hash of what it shows) was drawn in the previous frame is drawn again from the
// texture it has: no recolouring, no upload. A texture no image asked for in a frame is
// reused for the next new image.
//
//   ImTextureID t = kept_texture(key, w, h, [&](std::vector<ImU32>& px) { /* w * h, row-major */ });
//   dl->AddImage(t, top_left, bottom_right);
//
// The texture samples the nearest texel (a cell is never blended with its neighbour).
#pragma once

#include <imgui.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace attnsim::app {

// The texture of the image named `key`, `width` x `height` texels; `fill` is called (with a
// vector of that many colours to fill) only when the image is not already on the GPU.
ImTextureID kept_texture(uint64_t key, int width, int height, const std::function<void(std::vector<ImU32>&)>& fill);

}  // namespace attnsim::app
