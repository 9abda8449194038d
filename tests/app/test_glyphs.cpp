// Every character a lesson or the UI shows has a glyph: in NanumGothic, or in DejaVu Sans
// for the ranges fonts.cpp merges from it (app/symbol_glyphs.h). A character in neither is
// drawn as '?' (lesson 08's "exp(m_old − m_new)" was, before the minus sign joined them).
#include <catch2/catch.hpp>

#define STBTT_STATIC
#define STB_TRUETYPE_IMPLEMENTATION
#include <stb/stb_truetype.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "app/symbol_glyphs.h"
#include "views/i18n.h"
#include "engine/scenario.h"

namespace {

using namespace attnsim;

struct FontFile {
  std::vector<unsigned char> bytes;
  stbtt_fontinfo info{};
  explicit FontFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
    ok = !bytes.empty() && stbtt_InitFont(&info, bytes.data(), stbtt_GetFontOffsetForIndex(bytes.data(), 0)) != 0;
  }
  bool has(char32_t cp) const { return ok && stbtt_FindGlyphIndex(&info, static_cast<int>(cp)) != 0; }
  bool ok = false;
};

// The code points of UTF-8 text above ASCII (the lessons are UTF-8; the loader refuses others).
std::vector<char32_t> non_ascii(const std::string& s) {
  std::vector<char32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (n > 1 && i + static_cast<size_t>(n) <= s.size()) {
      char32_t cp = c & (0xFF >> (n + 1));
      for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<size_t>(k)]) & 0x3F);
      out.push_back(cp);
    }
    i += static_cast<size_t>(n);
  }
  return out;
}

bool merged_symbol(char32_t cp) {
  for (const auto& [first, last] : app::kSymbolGlyphs)
    if (cp >= first && cp <= last) return true;
  return false;
}

}  // namespace

TEST_CASE("every character of the lessons and the UI strings has a glyph in NanumGothic or the merged symbols") {
  const FontFile nanum("/usr/share/fonts/truetype/nanum/NanumGothic.ttf");
  const FontFile dejavu("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf");
  if (!nanum.ok || !dejavu.ok) {
    WARN("NanumGothic or DejaVu Sans is not installed: glyph check skipped");
    return;
  }
  std::map<char32_t, std::string> where;  // the first place each character is used
  for (const auto& e : std::filesystem::directory_iterator(std::string(ATTNSIM_SOURCE_DIR) + "/lessons"))
    if (e.path().extension() == ".toml") {
      std::ifstream in(e.path());
      const std::string text(std::istreambuf_iterator<char>(in), {});
      for (char32_t cp : non_ascii(text)) where.emplace(cp, e.path().filename().string());
    }
  for (const std::string& s : app::all_korean_strings())
    for (char32_t cp : non_ascii(s)) where.emplace(cp, "the UI string \"" + s + "\"");
  for (const Scenario& s : all_scenarios())
    for (const std::string& text : {s.title_ko, s.summary_ko})
      for (char32_t cp : non_ascii(text)) where.emplace(cp, "scenario " + s.name);
  REQUIRE(where.size() > 500);  // the Hangul syllables of the lessons at least (616 today)
  for (const auto& [cp, place] : where) {
    INFO("U+" << std::hex << static_cast<uint32_t>(cp) << " in " << place);
    if (nanum.has(cp)) continue;
    CHECK(merged_symbol(cp));
    CHECK(dejavu.has(cp));
  }
  // the merged ranges are DejaVu's to give
  for (const auto& [first, last] : app::kSymbolGlyphs)
    for (char32_t cp = first; cp <= last; ++cp) CHECK(dejavu.has(cp));
}
