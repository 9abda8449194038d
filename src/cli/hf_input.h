// The commands' one way into a Hugging Face model folder (config.json + *.safetensors, as
// opposed to an attnsim checkpoint's model.json): the input tokens (--tokens ids or --text
// through the folder's tokenizer) and the load, with the model's and the command's memory
// predicted from the headers and refused before any tensor is read.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include <optional>

#include "model/formats/hf_model.h"
#include "model/formats/hf_text.h"

namespace attnsim::cli {

struct HfInput {
  std::string tokens;  // --tokens 3,1,4
  std::string text;    // --text "..." (the folder's tokenizer)
};

// --tokens and --text on a command; `what` says what they are for there.
void add_hf_input_options(CLI::App& cmd, HfInput& in, const std::string& what);
// Error when --tokens or --text was given to a command reading an attnsim checkpoint.
void refuse_hf_input(const HfInput& in);

// "3,1,4" -> {3, 1, 4}: plain digits, one comma between ids; Error otherwise.
std::vector<int32_t> parse_token_ids(const std::string& text);
// The sequence the command runs on: --tokens, else --text encoded by the tokenizer (BOS first
// for the Llama family, as its tokenizer's post-processor adds it); Error when neither is given.
// Ids are checked against the config's vocabulary and positions.
std::vector<int32_t> hf_input_tokens(const HfInput& in, const std::string& dir, const model::hf::HfConfig& config,
                                     const model::hf::HfText& text);
// The same, opening the tokenizer only for --text.
std::vector<int32_t> hf_input_tokens(const HfInput& in, const std::string& dir, const model::hf::HfConfig& config);

}  // namespace attnsim::cli
