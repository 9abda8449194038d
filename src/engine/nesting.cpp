#include "nesting.h"

#include "error.h"

namespace attnsim {

namespace {

// Skips a string starting at text[i] (its opening quote); returns the index past its end.
// JSON and TOML basic strings take backslash escapes; TOML literal strings do not; TOML's
// triple-quoted forms end at the next triple quote. An unterminated string runs to the end
// (the parser reports it).
size_t skip_string(std::string_view text, size_t i, Syntax syntax) {
  const char q = text[i];
  const bool escapes = q == '"';
  const bool triple = syntax == Syntax::Toml && text.compare(i, 3, std::string(3, q)) == 0;
  i += triple ? 3 : 1;
  while (i < text.size()) {
    const char c = text[i];
    if (escapes && c == '\\') {
      i += 2;
      continue;
    }
    if (c == q) {
      if (!triple) return i + 1;
      if (text.compare(i, 3, std::string(3, q)) == 0) {
        // a closing """ may be followed by up to two more quotes that belong to the content
        size_t end = i + 3;
        while (end < text.size() && end < i + 5 && text[end] == q) ++end;
        return end;
      }
    }
    if (!triple && c == '\n' && syntax == Syntax::Toml) return i;  // single-line strings end here at the latest
    ++i;
  }
  return i;
}

}  // namespace

std::optional<size_t> too_deep(std::string_view text, Syntax syntax) {
  int depth = 0;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"' || (syntax == Syntax::Toml && c == '\'')) {
      i = skip_string(text, i, syntax);
      continue;
    }
    if (syntax == Syntax::Toml && c == '#') {  // a comment runs to the end of its line
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    ++i;
  }
  return std::nullopt;
}

nlohmann::json parse_json(std::string_view text, const std::string& what) {
  if (const auto at = too_deep(text, Syntax::Json))
    throw Error(what + ": nested more than " + std::to_string(kMaxNesting) + " levels deep (at byte " +
                std::to_string(*at) + "); no attnsim file nests like that");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(what + ": not valid JSON (" + std::string(e.what()) + ")");
  }
}

}  // namespace attnsim
