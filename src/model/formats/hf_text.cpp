#include "model/formats/hf_text.h"

#include <filesystem>

#include "engine/error.h"

namespace attnsim::model::hf {

namespace {

// A model's embedding may have more rows than its tokenizer has tokens (Qwen2: 151,936 rows,
// about 151,665 tokens; the rest pad to a multiple of 128). Such an id is a valid model output
// with no text: it reads as "<id N>" wherever a token would.
std::string id_mark(int32_t id) { return "<id " + std::to_string(id) + ">"; }

// A folder may have no tokenizer (a model repository without one opens on token ids), so the
// refusal says what is missing and what works instead.
[[noreturn]] void no_tokenizer(const std::string& dir) {
  throw Error(dir + " has no tokenizer (tokenizer.json, or vocab.json + merges.txt), so text cannot become token ids: "
              "give the ids themselves (--tokens), or use a model folder with a tokenizer");
}

}  // namespace

std::string HfText::label(int32_t id) const {
  if (!tokenizer) return std::to_string(id);
  return tokenizer->is_token(id) ? tokenizer->token_label(id) : id_mark(id);
}

std::string HfText::text(const std::vector<int32_t>& ids) const {
  std::string s;
  if (!tokenizer) {
    for (int32_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
    return s;
  }
  std::vector<int32_t> run;  // decoded a run at a time, so decoder rules (stripping) see whole runs
  for (int32_t id : ids) {
    if (tokenizer->is_token(id)) {
      run.push_back(id);
      continue;
    }
    s += tokenizer->decode(run) + id_mark(id);
    run.clear();
  }
  return s + tokenizer->decode(run);
}

std::vector<int32_t> HfText::encode(const std::string& text, const HfConfig& config, const std::string& dir,
                                    std::vector<Span>* spans) const {
  if (!tokenizer) no_tokenizer(dir);
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
  const bool json = fs::exists(dir + "/tokenizer.json", ec), vocab = fs::exists(dir + "/vocab.json", ec),
             merges = fs::exists(dir + "/merges.txt", ec);
  if (!json && vocab != merges)  // half of GPT-2's pair: reading ids as numbers would hide it
    throw Error(dir + ": has " + (vocab ? "vocab.json but no merges.txt" : "merges.txt but no vocab.json") +
                "; GPT-2's tokenizer needs both (or a tokenizer.json)");
  if (json || vocab) t.tokenizer = load_tokenizer(dir);
  else if (needed) no_tokenizer(dir);
  return t;
}

}  // namespace attnsim::model::hf
