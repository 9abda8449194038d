// Text measurement with stb_truetype on the font file itself. See text_metrics.h.
#include "figure/text_metrics.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#define STB_TRUETYPE_IMPLEMENTATION
#define STBTT_STATIC
#include <stb/stb_truetype.h>

namespace attnsim::figure {

namespace {

// The font file, read once. Its advance widths are what Cairo's font engine reports with
// hinting off (checked to the fourth decimal on Latin, Korean and symbols, regular and bold:
// NanumGothic's bold face has the same advances), so the PNG and PDF sinks agree with the
// layouts, and the browser build, which has no Cairo, lays out the same figures.
struct Face {
  std::vector<unsigned char> bytes;
  stbtt_fontinfo info{};
  bool ok = false;
  Face() {
    if (FILE* f = std::fopen(kFontFile, "rb")) {
      unsigned char buf[1 << 16];
      for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.insert(bytes.end(), buf, buf + n);
      std::fclose(f);
    }
    ok = !bytes.empty() && stbtt_InitFont(&info, bytes.data(), stbtt_GetFontOffsetForIndex(bytes.data(), 0)) != 0;
  }
};

const Face& face() {
  static const Face f;
  return f;
}

// UTF-8 -> code points; an invalid byte counts as one unknown glyph.
template <class Fn>
void each_code_point(const std::string& text, Fn&& fn) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + static_cast<size_t>(n) > text.size()) {
      fn(0xfffd);
      ++i;
      continue;
    }
    char32_t cp = n == 1 ? c : c & (0x7f >> n);
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3f);
    fn(cp);
    i += static_cast<size_t>(n);
  }
}

// Width at 100 units: the sum of the glyphs' advances (no kerning, as Cairo's toy API).
double width_at_100(const std::string& text) {
  const Face& f = face();
  if (!f.ok) return 55.0 * static_cast<double>(text.size());  // no font file: a Latin average
  const unsigned char* head = f.info.data + f.info.head;  // the 'head' table: unitsPerEm at byte 18
  const double scale = 100.0 / ((head[18] << 8) | head[19]);
  double w = 0;
  each_code_point(text, [&](char32_t cp) {
    int advance = 0, bearing = 0;
    stbtt_GetCodepointHMetrics(&f.info, static_cast<int>(cp), &advance, &bearing);
    w += advance * scale;
  });
  return w;
}

}  // namespace

std::string font_safe(const std::string& text) {
  static const std::pair<const char*, const char*> kSwaps[] = {{"ᵀ", "^T"}, {"−", "-"}};
  std::string s = text;
  for (const auto& [from, to] : kSwaps)
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + std::strlen(to)))
      s.replace(at, std::strlen(from), to);
  return s;
}

float text_width(const std::string& raw, float size, bool /*bold*/) {
  static std::mutex mutex;
  static std::map<std::string, double> cache;
  const std::string text = font_safe(raw);
  double w;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(text);
    if (it == cache.end()) it = cache.emplace(text, width_at_100(text)).first;
    w = it->second;
  }
  return static_cast<float>(w * size / 100.0);
}

std::string summarize_labels(const std::vector<std::string>& labels, const std::string& noun) {
  std::string s = std::to_string(labels.size()) + " " + noun;
  if (labels.empty()) return s;
  s += ": " + labels.front();
  if (labels.size() > 2) s += " …";
  if (labels.size() > 1) s += " " + labels.back();
  return s;
}

}  // namespace attnsim::figure
