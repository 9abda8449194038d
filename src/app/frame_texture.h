// Images drawn for one frame: a grid of colours (a heatmap's blocks, a cache strip) uploaded
// as one texture and drawn with ImDrawList::AddImage as one quad.
//
// Why: thousands of cells as separate rectangles cost the UI thread their vertices and the
// software rasteriser (Mesa llvmpipe under Xvfb) their triangles; the memory strip alone was
// 40 000 vertices a frame. As a texture it is four.
//
//   std::vector<ImU32> px(w * h);            // row-major, ImGui's packed colours
//   dl->AddImage(frame_texture(px, w, h), top_left, bottom_right);
//
// The texture samples the nearest texel (a cell is never blended with its neighbour). It is
// valid until the frame that asked for it is rendered; the next frame reuses it.
#pragma once

#include <imgui.h>

#include <vector>

namespace attnsim::app {

ImTextureID frame_texture(const std::vector<ImU32>& rgba, int width, int height);

}  // namespace attnsim::app
