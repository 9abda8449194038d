#include "hf_input.h"

#include <filesystem>
#include <limits>

#include "engine/checked.h"
#include "engine/error.h"
#include "model/hf_forward.h"
#include "model/memory.h"

namespace attnsim::cli {

void add_hf_input_options(CLI::App& cmd, HfInput& in, const std::string& what) {
  CLI::Option* tokens = cmd.add_option("--tokens", in.tokens, what + ", as token ids (e.g. 15496,995)");
  tokens->check([](const std::string& s) { return s.empty() ? std::string("an empty value is not a list of ids") : std::string(); });
  cmd.add_option("--text", in.text, what + ", as text (the folder's tokenizer)")->excludes(tokens);
}

void refuse_hf_input(const HfInput& in) {
  if (!in.tokens.empty() || !in.text.empty())
    throw Error("--tokens and --text take a Hugging Face folder (config.json + model.safetensors); this --model is an attnsim checkpoint");
}

std::vector<int32_t> parse_token_ids(const std::string& text) {
  std::vector<int32_t> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      throw Error("--tokens '" + one_line(text) + "': '" + one_line(item) + "' is not a token id (ids are digits, a comma between them)");
    out.push_back(static_cast<int32_t>(parse_int(item, "token id", 0, std::numeric_limits<int32_t>::max())));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string HfText::label(int32_t id) const {
  return tokenizer && id >= 0 && id < tokenizer->vocab_size() ? tokenizer->token_label(id) : std::to_string(id);
}

std::string HfText::text(const std::vector<int32_t>& ids) const {
  if (tokenizer) return tokenizer->decode(ids);
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

HfText open_hf_text(const std::string& dir, bool needed) {
  namespace fs = std::filesystem;
  std::error_code ec;
  HfText t;
  const bool has = fs::exists(dir + "/tokenizer.json", ec) ||
                   (fs::exists(dir + "/vocab.json", ec) && fs::exists(dir + "/merges.txt", ec));
  if (has || needed) t.tokenizer = model::hf::load_tokenizer(dir);
  return t;
}

std::vector<int32_t> hf_input_tokens(const HfInput& in, const std::string& dir, const model::hf::HfConfig& config,
                                     const HfText& text) {
  std::vector<int32_t> ids;
  if (!in.tokens.empty()) {
    ids = parse_token_ids(in.tokens);
  } else if (!in.text.empty()) {
    if (!text.tokenizer) throw Error(dir + ": --text needs the folder's tokenizer (tokenizer.json, or vocab.json + merges.txt)");
    if (config.family == model::hf::Family::Llama && text.tokenizer->bos_id()) ids.push_back(*text.tokenizer->bos_id());
    for (int32_t id : text.tokenizer->encode(in.text)) ids.push_back(id);
  } else {
    throw Error("give the input as --tokens IDS (e.g. --tokens 15496,995) or --text \"...\"");
  }
  model::hf::check_tokens(config, ids);
  return ids;
}

std::vector<int32_t> hf_input_tokens(const HfInput& in, const std::string& dir, const model::hf::HfConfig& config) {
  return hf_input_tokens(in, dir, config, in.text.empty() ? HfText{} : open_hf_text(dir, true));
}

model::hf::HfModel load_hf_checked(const std::string& dir, int64_t command_bytes, int64_t mem_limit,
                                   const std::string& what) {
  const int64_t need = checked_add(model::hf::predict_hf_model_bytes(dir), command_bytes, "memory");
  model::check_fits(need, mem_limit, what, "fewer tokens, or a smaller model");
  return model::hf::load_hf_model(dir, mem_limit);
}

}  // namespace attnsim::cli
