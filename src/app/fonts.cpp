// The UI font. See fonts.h.
#include "app/fonts.h"

#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "app/symbol_glyphs.h"
#include "views/i18n.h"
#include "engine/scenario.h"

namespace attnsim::app {

std::string find_korean_font(std::string* why) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("ATTNSIM_FONT")) candidates.emplace_back(env);
  candidates.emplace_back("/usr/share/fonts/truetype/nanum/NanumGothic.ttf");
  candidates.emplace_back("/usr/local/share/fonts/NanumGothic.ttf");
  candidates.emplace_back("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc");
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return c;
  }
  if (why)
    *why = "Korean font not found (looked for fonts-nanum's NanumGothic.ttf; install it with "
           "'apt-get install fonts-nanum' or set ATTNSIM_FONT): Korean text shows as '?'";
  return "";
}

namespace {

constexpr const char* kSymbolFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

// UTF-8 -> code points; invalid bytes are skipped.
void decode_into(const std::string& text, std::u32string& out) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    char32_t cp = 0;
    int n = 0;
    if (c < 0x80) { cp = c; n = 1; }
    else if ((c >> 5) == 6) { cp = c & 0x1f; n = 2; }
    else if ((c >> 4) == 14) { cp = c & 0x0f; n = 3; }
    else if ((c >> 3) == 30) { cp = c & 0x07; n = 4; }
    else { ++i; continue; }
    if (i + static_cast<size_t>(n) > text.size()) break;
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3f);
    i += static_cast<size_t>(n);
    if (cp > 0x7f && cp <= 0xffff) out.push_back(cp);  // ImWchar is 16-bit in Debian's build
  }
}

}  // namespace

void Fonts::init(float base_px, float ui_scale) {
  base_px_ = base_px;
  ui_scale_ = ui_scale;
  path_ = find_korean_font(&message_);
  if (!message_.empty()) std::fprintf(stderr, "attnsim: %s\n", message_.c_str());
  for (const auto& s : all_korean_strings()) want(s);
  for (const auto& s : all_scenarios()) {
    want(s.title_ko + s.summary_ko);
    for (const auto& sentence : s.sentences) want(sentence);
  }
  want("·√×→←↔Σ≈∞✓✗–—…θ");  // θ: the RoPE steps' notes (rope θ=10000)
  dirty_ = true;
}

void Fonts::want(const std::string& text) {
  std::u32string cps;
  decode_into(text, cps);
  for (char32_t cp : cps)
    if (glyphs_.find(cp) == std::u32string::npos) {
      glyphs_.push_back(cp);
      dirty_ = true;
    }
}

void Fonts::set_raster_scale(float raster) {
  if (raster != raster_) {
    raster_ = raster;
    dirty_ = true;
  }
}

void Fonts::set_ui_scale(float scale) {
  if (scale != ui_scale_) {
    ui_scale_ = scale;
    dirty_ = true;
  }
}

void Fonts::rebuild_if_needed() {
  if (!dirty_) return;
  build();
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  dirty_ = false;
}

void Fonts::build() {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  const float px = base_px_ * ui_scale_ * raster_;
  // Glyphs are rasterised at `px`; FontGlobalScale brings them back to logical size, so a
  // 4x export gets glyphs drawn at 4x, not stretched.
  io.FontGlobalScale = 1.0f / raster_;
  if (path_.empty()) {
    ImFontConfig cfg;
    cfg.SizePixels = px;
    io.Fonts->AddFontDefault(&cfg);
  } else {
    ImFontGlyphRangesBuilder builder;
    builder.AddRanges(io.Fonts->GetGlyphRangesDefault());
    for (char32_t cp : glyphs_) builder.AddChar(static_cast<ImWchar>(cp));
    static ImVector<ImWchar> ranges;  // must outlive the atlas build
    ranges.clear();
    builder.BuildRanges(&ranges);
    ImFontConfig cfg;
    cfg.OversampleH = 1;
    cfg.OversampleV = 1;
    if (!io.Fonts->AddFontFromFileTTF(path_.c_str(), px, &cfg, ranges.Data)) {
      message_ = "could not load " + path_ + ": using the Latin fallback font";
      std::fprintf(stderr, "attnsim: %s\n", message_.c_str());
      path_.clear();
      io.Fonts->AddFontDefault();
    } else if (std::filesystem::is_regular_file(kSymbolFont)) {
      // Symbols NanumGothic lacks come from DejaVu Sans (symbol_glyphs.h), which Debian
      // installs with most desktops and the page carries; glyphs Nanum has are not replaced.
      static ImVector<ImWchar> symbols;  // must outlive the atlas build
      symbols.clear();
      for (const auto& [first, last] : kSymbolGlyphs) {
        symbols.push_back(static_cast<ImWchar>(first));
        symbols.push_back(static_cast<ImWchar>(last));
      }
      symbols.push_back(0);
      ImFontConfig merge;
      merge.MergeMode = true;
      merge.OversampleH = merge.OversampleV = 1;
      io.Fonts->AddFontFromFileTTF(kSymbolFont, px, &merge, symbols.Data);
    }
  }
  io.Fonts->Build();
  built_raster_ = raster_;
}

Fonts& fonts() {
  static Fonts f;
  return f;
}

}  // namespace attnsim::app
