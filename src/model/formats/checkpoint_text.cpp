#include "model/formats/checkpoint_text.h"

#include <filesystem>

#include "engine/error.h"
#include "model/text/tokenizer.h"

namespace attnsim::model {

namespace fs = std::filesystem;

CheckpointText checkpoint_text(const std::string& dir, const ModelConfig& c) {
  CheckpointText t;
  t.vocab = c.vocab;
  std::error_code ec;
  if (!fs::exists(fs::path(dir) / "tokenizer.json", ec)) return t;
  auto tok = std::make_shared<const hf::Tokenizer>(hf::load_tokenizer(dir));
  const std::string file = (fs::path(dir) / "tokenizer.json").string();
  if (tok->vocab_size() != c.vocab)
    throw Error(file + ": " + std::to_string(tok->vocab_size()) + " tokens, but the model's vocabulary is " +
                std::to_string(c.vocab));
  const std::optional<int32_t> id = tok->token_id("<|endoftext|>");
  if (!id) throw Error(file + ": no <|endoftext|> token (a language model's sequences start with it)");
  t.tokenizer = std::move(tok);
  t.start = *id;
  return t;
}

std::vector<int32_t> CheckpointText::encode(const std::string& text) const {
  if (!tokenizer) return model::encode(text, vocab);  // BOS first
  std::vector<int32_t> tokens{start};
  const std::vector<int32_t> ids = tokenizer->encode(text);
  tokens.insert(tokens.end(), ids.begin(), ids.end());
  return tokens;
}

std::string CheckpointText::label(int32_t id) const {
  if (!tokenizer) return token_label(id);
  return tokenizer->is_token(id) ? tokenizer->token_label(id) : "#" + std::to_string(id);  // a hole below vocab_size
}

std::string CheckpointText::decode(const std::vector<int32_t>& ids) const {
  return tokenizer ? tokenizer->decode(ids) : model::decode(ids);
}

}  // namespace attnsim::model
