// What a lesson step's highlight.token and highlight.bar name (FORMAT.md: highlight), found
// among a model's tokens by their text, so that the checker, the app and the slides frame the
// same thing:
//   token "fish"  the last position of the sequence whose token reads "fish" (a leading space
//                 aside; BOS is position 0): its row in every head map and its column in the
//                 token strip are framed (what that word attends to)
//   bar "mat"     the vocabulary's token for " mat" (as after a word), else for "mat": the
//                 Sampling tab's chart always shows its bar, framed
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnsim::model::hf {
class Tokenizer;
}

namespace attnsim::lessons {

// One token's text as the model writes it (a language model's tokenizer, or the toy's letters).
using TokenText = std::function<std::string(int32_t)>;
TokenText token_text(const model::hf::Tokenizer* tokenizer);  // nullptr: the toy model's labels

std::optional<int64_t> marked_position(const std::vector<int32_t>& tokens, const TokenText& text, const std::string& word);
std::optional<int32_t> marked_token(int64_t vocab, const TokenText& text, const std::string& word);

}  // namespace attnsim::lessons
