// Images kept by content. See frame_texture.h.
#include "app/frame_texture.h"

#include <unordered_map>

#include "app/gl.h"

namespace attnsim::app {

namespace {

class KeptTextures {
 public:
  GLuint get(uint64_t key, int w, int h, const std::function<void(std::vector<ImU32>&)>& fill) {
    const int frame = ImGui::GetFrameCount();
    if (frame != frame_) new_frame(frame);
    auto it = live_.find(key);
    if (it != live_.end() && it->second.w == w && it->second.h == h) {
      it->second.frame = frame;
      return it->second.id;
    }
    GLuint id = 0;
    if (it != live_.end()) {
      id = it->second.id;  // same key, new size (a hash collision or a resized view): refill
    } else if (!spare_.empty()) {
      id = spare_.back();
      spare_.pop_back();
    } else {
      id = new_cell_texture();
    }
    pixels_.assign(static_cast<size_t>(w) * static_cast<size_t>(h), 0);
    fill(pixels_);
    glBindTexture(GL_TEXTURE_2D, id);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    // ImU32 is R, G, B, A in memory order (IM_COL32_R_SHIFT 0)
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, pixels_.data());
    live_[key] = {id, w, h, frame};
    return id;
  }

 private:
  struct Entry {
    GLuint id = 0;
    int w = 0, h = 0;
    int frame = 0;  // the last frame that drew it
  };

  // Images the previous frame did not draw give their textures back. (This frame's are
  // about to be asked for; the one before's are still queued for drawing until this point.)
  void new_frame(int frame) {
    for (auto it = live_.begin(); it != live_.end();) {
      if (it->second.frame < frame_) {
        spare_.push_back(it->second.id);
        it = live_.erase(it);
      } else {
        ++it;
      }
    }
    frame_ = frame;
  }

  std::unordered_map<uint64_t, Entry> live_;
  std::vector<GLuint> spare_;
  std::vector<ImU32> pixels_;
  int frame_ = -1;
};

}  // namespace

ImTextureID kept_texture(uint64_t key, int width, int height, const std::function<void(std::vector<ImU32>&)>& fill) {
  static KeptTextures textures;
  return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(textures.get(key, width, height, fill)));
}

}  // namespace attnsim::app
