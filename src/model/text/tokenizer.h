// The toy model's tokenizer: one character per token, so typed text means something.
//   0 = BOS (shown "^", put in front by encode), then a-z A-Z 0-9 space and '.': 64 tokens.
// Models with a larger vocabulary name the extra tokens "t64", "t65", ...
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnsim::model {

inline constexpr int64_t kCharVocab = 65;
std::string token_label(int32_t token);
// BOS + one token per character; throws Error naming a character outside the alphabet.
std::vector<int32_t> encode(const std::string& text, int64_t vocab);
std::string decode(const std::vector<int32_t>& tokens);

}  // namespace attnsim::model
