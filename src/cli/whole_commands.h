// The whole-pass commands (model/whole_pass.h) on a Hugging Face folder or an attnsim
// checkpoint: `trace --whole` and `lens`. Each returns the exit code.
#pragma once

#include <cstdint>
#include <string>

#include "hf_input.h"
#include "model/pass/sampling.h"

namespace attnsim::cli {

struct WholeTraceArgs {
  std::string model;
  HfInput in;
  model::SamplingOptions sampling;
  int64_t mem_limit = 0;  // 0 = the default
  std::string dump;       // OUT/<step>.npy, OUT/layer_<L>/<step>.npy, OUT/trace.json
  bool force = false, json = false;
};
int run_whole_trace(const WholeTraceArgs& args);

}  // namespace attnsim::cli
