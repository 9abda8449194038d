// The timings of a Hugging Face model that the desktop (attnsim-cli bench-model) and the page
// (main_web.cpp's attnsim_bench_model) report side by side: one code path, so a ratio between
// them measures the platform, not two programs.
//   bench_token_ids   the input: `length` ids from the seeded stream, the same on both sides
//   time_forward      hf_forward over them keeping layer `layer`'s every step: one warm-up,
//                     then `repeats` runs, sorted (ms)
//   time_decode       `steps` greedy tokens after them through HfDecoder's KV caches, each
//                     call's traces kept (as `attnsim-cli decode` keeps them): the single-token
//                     calls, sorted (ms); the prefill is not among them
#pragma once

#include <cstdint>
#include <vector>

#include "hf_model.h"

namespace attnsim::model::hf {

std::vector<int32_t> bench_token_ids(const HfConfig& config, int64_t length);
std::vector<double> time_forward(const HfModel& model, const std::vector<int32_t>& tokens, int64_t layer, int repeats,
                                 int64_t* layer_trace_bytes = nullptr);
std::vector<double> time_decode(const HfModel& model, const std::vector<int32_t>& prompt, int64_t steps);
// The bytes time_decode needs beyond the model (its caches and one call).
int64_t predict_decode_bytes(const HfConfig& config, int64_t prompt, int64_t steps);

}  // namespace attnsim::model::hf
