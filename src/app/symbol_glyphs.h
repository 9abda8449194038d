// The characters the UI draws from DejaVu Sans because NanumGothic has no glyph for them
// (fonts.cpp merges these ranges into the atlas): the transpose mark of "q·kᵀ", ∑ and the
// minus sign, √, ✓ and ✗. tests/app/test_glyphs.cpp checks that every character of the
// lessons and of the UI's strings is in NanumGothic or here.
#pragma once

namespace attnsim::app {

inline constexpr char32_t kSymbolGlyphs[][2] = {  // inclusive ranges
    {0x1D40, 0x1D40}, {0x2211, 0x2212}, {0x221A, 0x221A}, {0x2713, 0x2713}, {0x2717, 0x2717}};

}  // namespace attnsim::app
