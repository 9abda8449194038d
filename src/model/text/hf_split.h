// The pre-tokenizers' split patterns, written out by hand over UTF-8 code units (std::regex has
// no \p{L}). Each returns the pieces as byte ranges that cover the text exactly, in order, as
// the regex's successive matches would (every code unit falls in some alternative).
//
//   Gpt2    's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   Llama3  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   Qwen2   the same with \p{N} instead of \p{N}{1,3}
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace attnsim::model::hf {

enum class SplitPattern { Gpt2, Llama3, Qwen2 };
using ByteRange = std::pair<size_t, size_t>;  // [begin, end)

// The pattern a tokenizer.json regex string spells, or nullopt for one attnsim does not know.
std::optional<SplitPattern> known_pattern(std::string_view regex);
const char* pattern_name(SplitPattern p);

std::vector<ByteRange> split_words(std::string_view text, SplitPattern pattern);

}  // namespace attnsim::model::hf
