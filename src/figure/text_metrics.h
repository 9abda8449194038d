// Text measurement shared by every layout and the Cairo sink, so that a label placed
// "where it fits" fits in the PNG, the PDF and the SVG, on the desktop and in the browser.
// The font is NanumGothic (fonts-nanum): it covers Korean and Latin. Cairo draws it by
// family name (fontconfig); widths are measured on the file (the web build embeds it at
// the same path).
#pragma once

#include <string>
#include <vector>

namespace attnsim::figure {

inline constexpr const char* kFontFamily = "NanumGothic";
inline constexpr const char* kFontFile = "/usr/share/fonts/truetype/nanum/NanumGothic.ttf";

// The text with the characters NanumGothic lacks spelled with ones it has (Cairo's toy font
// API has no fallback font: they would be drawn as empty boxes): "Kᵀ" -> "K^T", the minus
// sign U+2212 -> "-". Figure::text applies it, so every sink draws the same characters.
std::string font_safe(const std::string& text);

// Advance width of one line of text at `size` units (of font_safe(text)).
float text_width(const std::string& text, float size, bool bold = false);

// "6 rows: 고양이가 … <pad>": what a heatmap axis says when its labels do not all fit.
std::string summarize_labels(const std::vector<std::string>& labels, const std::string& noun);

}  // namespace attnsim::figure
