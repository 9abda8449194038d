// Words to positions and token ids. See step_marks.h.
#include "lessons/step_marks.h"

#include "model/text/hf_tokenizer.h"
#include "model/text/tokenizer.h"

namespace attnsim::lessons {

namespace {

// The text without its leading whitespace: "fish" matches the token " fish".
std::string bare(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t')) ++i;
  return s.substr(i);
}

}  // namespace

TokenText token_text(const model::hf::Tokenizer* tokenizer) {
  if (!tokenizer) return [](int32_t id) { return model::token_label(id); };
  return [tokenizer](int32_t id) { return tokenizer->is_token(id) ? tokenizer->decode({id}) : std::string(); };
}

std::optional<int64_t> marked_position(const std::vector<int32_t>& tokens, const TokenText& text, const std::string& word) {
  if (word.empty()) return std::nullopt;
  for (size_t i = tokens.size(); i-- > 1;)  // position 0 is BOS
    if (bare(text(tokens[i])) == word) return static_cast<int64_t>(i);
  return std::nullopt;
}

std::optional<int32_t> marked_token(int64_t vocab, const TokenText& text, const std::string& word) {
  if (word.empty()) return std::nullopt;
  std::optional<int32_t> bare_match;
  for (int64_t id = 0; id < vocab; ++id) {
    const std::string t = text(static_cast<int32_t>(id));
    if (t == " " + word) return static_cast<int32_t>(id);
    if (!bare_match && t == word) bare_match = static_cast<int32_t>(id);
  }
  return bare_match;
}

}  // namespace attnsim::lessons
