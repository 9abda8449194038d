// The model commands on a Hugging Face folder (heads, ablate, predict, decode): what the
// toy-checkpoint commands do, on the folder's tokens. Each cmd_<name>.cpp sends a folder that
// model::hf::is_hf_model_dir() recognises here; each returns the exit code.
#pragma once

#include <cstdint>
#include <string>

#include "hf_input.h"
#include "model/pass/sampling.h"

namespace attnsim::cli {

// Role scores on the given tokens (when any) and on repeated random sequences.
int run_hf_heads(const std::string& dir, const HfInput& in, int64_t mem_limit, bool json);
// Next-token loss change with heads knocked out (each alone, or `heads` together).
int run_hf_ablate(const std::string& dir, const HfInput& in, const std::string& heads, bool mean, int64_t mem_limit,
                  bool json);
// The k most likely next tokens after the last input token.
int run_hf_predict(const std::string& dir, const HfInput& in, int64_t k, int64_t mem_limit, bool json);

struct HfDecodeArgs {
  int64_t steps = 8;
  model::SamplingOptions sampling;  // temperature 0 = greedy; top-k, top-p, seed
  int64_t mem_limit = 0;
  bool json = false;
  std::string dump;        // DIR/step_NNNN/layer_L/<step>.npy
};
int run_hf_decode(const std::string& dir, const HfInput& in, const HfDecodeArgs& args);

}  // namespace attnsim::cli
