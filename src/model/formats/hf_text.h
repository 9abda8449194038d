// How a Hugging Face folder's token ids read as text, for every front end (the CLI's commands,
// the app's view): the folder's tokenizer when it has one (tokenizer.json, or GPT-2's
// vocab.json + merges.txt), else ids shown as numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/formats/hf_config.h"
#include "model/text/hf_tokenizer.h"

namespace attnsim::model::hf {

struct HfText {
  std::optional<Tokenizer> tokenizer;
  std::string label(int32_t id) const;                      // "·world" with a tokenizer, "995" without
  std::string text(const std::vector<int32_t>& ids) const;  // decoded, or the ids joined by commas
  // The model's input for `text`: BOS first for the Llama family (as its tokenizer's
  // post-processor adds it), then the tokenizer's ids; with `spans`, each token's bytes of
  // `text` (BOS: the empty span at 0). Error naming `dir` when there is no tokenizer. The ids
  // are not checked against the config (check_tokens, hf_forward.h).
  std::vector<int32_t> encode(const std::string& text, const HfConfig& config, const std::string& dir,
                              std::vector<Span>* spans) const;
};

// Loads DIR's tokenizer if it has files for one (a malformed one is an Error); `needed`: Error
// when it has none.
HfText open_hf_text(const std::string& dir, bool needed);

}  // namespace attnsim::model::hf
