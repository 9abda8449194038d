#include "hf_input.h"

#include <limits>

#include "engine/checked.h"
#include "engine/error.h"
#include "model/pass/hf_forward.h"

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

std::vector<int32_t> hf_input_tokens(const HfInput& in, const std::string& dir, const model::hf::HfConfig& config,
                                     const model::hf::HfText& text) {
  std::vector<int32_t> ids;
  if (!in.tokens.empty()) {
    ids = parse_token_ids(in.tokens);
  } else if (!in.text.empty()) {
    ids = text.encode(in.text, config, dir, nullptr);
  } else {
    throw Error("give the input as --tokens IDS (e.g. --tokens 15496,995) or --text \"...\"");
  }
  model::hf::check_tokens(config, ids);
  return ids;
}

std::vector<int32_t> hf_input_tokens(const HfInput& in, const std::string& dir, const model::hf::HfConfig& config) {
  return hf_input_tokens(in, dir, config, in.text.empty() ? model::hf::HfText{} : model::hf::open_hf_text(dir, true));
}

}  // namespace attnsim::cli
