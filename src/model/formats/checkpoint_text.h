// How an attnsim checkpoint's token ids read as text, one rule for the app's views and the CLI:
// a language model's folder holds tokenizer.json and its sequences start with <|endoftext|>;
// the toy model reads characters, BOS ("^") first (model/text/tokenizer.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/formats/config.h"
#include "model/text/hf_tokenizer.h"

namespace attnsim::model {

struct CheckpointText {
  std::shared_ptr<const hf::Tokenizer> tokenizer;  // null: the toy's characters
  int32_t start = 0;                                      // every sequence's first token
  int64_t vocab = 0;

  std::vector<int32_t> encode(const std::string& text) const;  // the start token, then the text's
  std::string label(int32_t id) const;                         // "·world", "a", "#17" (a hole)
  std::string decode(const std::vector<int32_t>& ids) const;   // ids after the start token
};

// The folder's text. Throws Error naming tokenizer.json when it does not fit the model (its
// size is not the vocabulary, or it has no <|endoftext|>).
CheckpointText checkpoint_text(const std::string& dir, const ModelConfig& config);

}  // namespace attnsim::model
