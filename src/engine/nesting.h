// Text from outside (a checkpoint's model.json, a training log line, a trace, a lesson's TOML)
// parsed with a bound on how deeply it nests. nlohmann::json and toml++ build and copy their
// values recursively, one stack frame per level: a 400 KB model.json of '[' overflows the
// stack (a segfault, not an error). Every JSON read of the project goes through parse_json;
// the lesson loader runs too_deep() before toml::parse. No file the project writes nests more
// than a few levels, so the bound costs nothing real.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace attnsim {

inline constexpr int kMaxNesting = 128;  // arrays / objects / inline tables inside each other

enum class Syntax { Json, Toml };

// The byte offset of the first '[' or '{' (outside strings and comments) that opens level
// kMaxNesting + 1, or nullopt when the text stays within the bound. A linear scan with no
// recursion: it runs before any parser sees the text.
std::optional<size_t> too_deep(std::string_view text, Syntax syntax);

// nlohmann::json::parse with the bound. Throws Error "WHAT: ..." (one line) for nesting past
// the bound and for invalid JSON.
nlohmann::json parse_json(std::string_view text, const std::string& what);

}  // namespace attnsim
