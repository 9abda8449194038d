// Korean and English UI text. Strings are written in English at the call site and looked up
// here: tr("Pipeline") gives "파이프라인" when the UI language is Korean. A string without a
// translation shows in English, so a missing entry is visible but never breaks the UI.
#pragma once

#include <string>
#include <vector>

namespace attnsim::app {

enum class Lang { En, Ko };

// Korean when LANG / LC_ALL / LC_MESSAGES starts with "ko", else English.
Lang lang_from_env();
Lang& ui_lang();
const char* tr(const char* english);
// Every Korean string in the table (the font atlas needs their glyphs).
std::vector<std::string> all_korean_strings();

}  // namespace attnsim::app
