#include "model/text/tokenizer.h"

#include <cstring>

#include "engine/error.h"

namespace attnsim::model {

static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .";

std::string token_label(int32_t token) {
  if (token == 0) return "^";
  if (token > 0 && token <= 64) return std::string(1, kAlphabet[token - 1]);
  return "t" + std::to_string(token);
}

std::vector<int32_t> encode(const std::string& text, int64_t vocab) {
  std::vector<int32_t> out{0};
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    const char* hit = ch ? std::strchr(kAlphabet, ch) : nullptr;
    if (!hit)
      throw Error("character " + std::to_string(i + 1) + " of the text is not in the model's alphabet " +
                  "(a-z A-Z 0-9 space .): byte 0x" + [&] {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(ch));
                    return std::string(buf);
                  }());
    const int32_t tok = static_cast<int32_t>(hit - kAlphabet) + 1;
    if (tok >= vocab)
      throw Error("character '" + std::string(1, ch) + "' is token " + std::to_string(tok) +
                  ", outside this model's vocabulary of " + std::to_string(vocab));
    out.push_back(tok);
  }
  return out;
}

std::string decode(const std::vector<int32_t>& tokens) {
  std::string s;
  for (int32_t t : tokens) s += token_label(t);
  return s;
}

}  // namespace attnsim::model
