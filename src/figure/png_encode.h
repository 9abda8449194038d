// PNG bytes in memory from RGBA pixels (stb_image_write), the one encoder for every sink and
// both platforms: the SVG sink embeds large heatmaps with it, so an SVG is the same bytes
// on the desktop and in the browser; the app's captures use it too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnsim::figure {

// width x height RGBA, top row first (straight alpha). Empty on failure (no memory).
std::string encode_png(int width, int height, const uint8_t* rgba);
inline std::string encode_png(int width, int height, const std::vector<uint8_t>& rgba) {
  return encode_png(width, height, rgba.data());
}

}  // namespace attnsim::figure
