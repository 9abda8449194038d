// PNG encoding. See png_encode.h.
#include "figure/png_encode.h"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC  // private to this file: Debian's libstb carries its own copy
#include <stb/stb_image_write.h>

namespace attnsim::figure {

std::string encode_png(int width, int height, const uint8_t* rgba) {
  std::string png;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, width, height, 4, rgba, width * 4)) return {};
  return png;
}

}  // namespace attnsim::figure
