// Korean and English UI text. Strings are written in English at the call site and looked up
// here: tr("Pipeline") gives "파이프라인" when the UI language is Korean. A string without a
// translation shows in English, so a missing entry is visible but never breaks the UI.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnsim::app {

enum class Lang { En, Ko };

// Korean when LANG / LC_ALL / LC_MESSAGES starts with "ko", else English.
Lang lang_from_env();
Lang& ui_lang();
const char* tr(const char* english);
// tr() in a given language, whatever the UI's (a slide or lesson deck has its own).
const char* tr_in(Lang lang, const char* english);
// tr() for a printf format, formatted: trf("step %lld", n). The compiler checks the English
// format against the arguments; a Korean entry whose placeholders differ from its English ones
// (same conversions, same order) is never used, so the checked format is the one that runs.
std::string trf(const char* english_format, ...) __attribute__((format(printf, 1, 2)));
std::string trf_in(Lang lang, const char* english_format, ...) __attribute__((format(printf, 2, 3)));  // trf() in `lang`
// tr() for a pattern whose "%s" are filled at run time with values computed elsewhere
// (model::Conclusion): the Korean pattern, with the same values in the same order.
std::string tr_filled(const std::string& english_pattern, const std::vector<std::string>& values);
// The conversions of a printf format in order ("%s", "%.3f", ...); "%%" is not one.
std::vector<std::string> placeholders(std::string_view format);
// The whole English -> Korean table, in order (tests check it).
std::vector<std::pair<std::string, std::string>> translations();
// Every Korean string in the table (the font atlas needs their glyphs).
std::vector<std::string> all_korean_strings();

}  // namespace attnsim::app
