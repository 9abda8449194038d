#include "hf_text.h"

#include <filesystem>

#include "engine/error.h"

namespace attnsim::model::hf {

std::string HfText::label(int32_t id) const {
  return tokenizer && id >= 0 && id < tokenizer->vocab_size() ? tokenizer->token_label(id) : std::to_string(id);
}

std::string HfText::text(const std::vector<int32_t>& ids) const {
  if (tokenizer) return tokenizer->decode(ids);
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

std::vector<int32_t> HfText::encode(const std::string& text, const HfConfig& config, const std::string& dir,
                                    std::vector<Span>* spans) const {
  if (!tokenizer) throw Error(dir + ": text input needs the folder's tokenizer (tokenizer.json, or vocab.json + merges.txt)");
  std::vector<int32_t> ids, body;
  std::vector<Span> body_spans = tokenizer->encode_spans(text, &body);
  if (config.family == Family::Llama && tokenizer->bos_id()) ids.push_back(*tokenizer->bos_id());
  if (spans) {
    spans->assign(ids.size(), Span{0, 0});
    spans->insert(spans->end(), body_spans.begin(), body_spans.end());
  }
  ids.insert(ids.end(), body.begin(), body.end());
  return ids;
}

HfText open_hf_text(const std::string& dir, bool needed) {
  namespace fs = std::filesystem;
  std::error_code ec;
  HfText t;
  const bool has = fs::exists(dir + "/tokenizer.json", ec) ||
                   (fs::exists(dir + "/vocab.json", ec) && fs::exists(dir + "/merges.txt", ec));
  if (has || needed) t.tokenizer = load_tokenizer(dir);
  return t;
}

}  // namespace attnsim::model::hf
