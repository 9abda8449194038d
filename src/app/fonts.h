// The UI font: Debian's fonts-nanum (NanumGothic) found at run time, with glyphs for
// Latin, the UI's Korean strings and whatever text the user typed. Only the glyphs in use
// are rasterised, so the atlas stays small even when an export re-renders it at 4x.
// Without the font the UI falls back to ImGui's Latin font and says so once.
#pragma once

#include <string>

namespace attnsim::app {

// Path of a Korean-capable font, or "" (then `why` says what was searched).
std::string find_korean_font(std::string* why = nullptr);

class Fonts {
 public:
  // Base size in pixels at scale 1 (before HiDPI).
  void init(float base_px, float ui_scale);
  // Adds the glyphs of `text` (UTF-8); the atlas is rebuilt at the next rebuild_if_needed().
  void want(const std::string& text);
  // Rebuilds the atlas (and its GL texture) when glyphs were added or the raster scale
  // changed. Call between frames, never inside one.
  void rebuild_if_needed();
  // Rasterise at ui_scale * raster (an export at 2x or 4x); glyphs stay the same logical size.
  void set_raster_scale(float raster);
  // The interface's scale (ui_scale.h): glyphs are rasterised at its size, so large text is sharp.
  void set_ui_scale(float scale);
  bool have_korean() const { return !path_.empty(); }
  const std::string& message() const { return message_; }

 private:
  void build();
  std::string path_, message_;
  std::u32string glyphs_;
  float base_px_ = 16, ui_scale_ = 1, raster_ = 1, built_raster_ = 0;
  bool dirty_ = true;
};

Fonts& fonts();

}  // namespace attnsim::app
