// The input of the whole-pass commands (trace --whole, lens): a Hugging Face folder or an
// attnsim checkpoint, loaded after the model and the whole pass's memory were predicted from
// the headers and checked against the limit, as one PassModel (model/whole_models.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hf_input.h"
#include "model/pass/forward.h"
#include "model/pass/whole_models.h"

namespace attnsim::cli {

struct WholeRun {
  std::optional<model::hf::HfModel> hf;
  std::optional<model::Model> toy;
  model::PassModel pass;  // reads hf or toy: a WholeRun does not move (open_whole_run's pointer)
  std::vector<int32_t> tokens;
  std::function<std::string(int32_t)> label;  // a token as text ("<id N>" past a tokenizer)
};

// `in`: --tokens (either kind of model) or --text (a folder's tokenizer; a checkpoint: one
// token per character after BOS). `sampling` is checked against the vocabulary before the
// load. Refused over mem_limit (0 = the default) with the figures: "WHAT needs about ...".
std::unique_ptr<WholeRun> open_whole_run(const std::string& dir, const HfInput& in, const model::SamplingOptions& sampling,
                                         int64_t mem_limit, const std::string& what);

}  // namespace attnsim::cli
