// Per-frame textures. See frame_texture.h.
#include "app/frame_texture.h"

#include <cstdint>

#include "app/gl.h"

namespace attnsim::app {

namespace {

// One texture per image drawn in a frame, reused from frame to frame (ImGui's frame count
// says when a new frame starts).
class FrameTextures {
 public:
  GLuint upload(const std::vector<ImU32>& rgba, int w, int h) {
    if (ImGui::GetFrameCount() != frame_) frame_ = ImGui::GetFrameCount(), used_ = 0;
    if (used_ == ids_.size()) ids_.push_back(new_cell_texture());
    const GLuint id = ids_[used_++];
    glBindTexture(GL_TEXTURE_2D, id);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    // ImU32 is R, G, B, A in memory order (IM_COL32_R_SHIFT 0)
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
    return id;
  }

 private:
  std::vector<GLuint> ids_;
  size_t used_ = 0;
  int frame_ = -1;
};

}  // namespace

ImTextureID frame_texture(const std::vector<ImU32>& rgba, int width, int height) {
  static FrameTextures textures;
  return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(textures.upload(rgba, width, height)));
}

}  // namespace attnsim::app
