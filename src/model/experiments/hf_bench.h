// The timings of a Hugging Face model that the desktop (attnsim-cli bench-model) and the page
// (main_web.cpp's attnsim_bench_model) report side by side: one code path, so a ratio between
// them measures the platform, not two programs.
//   bench_token_ids   the input: `length` ids from the seeded stream, the same on both sides
//   time_forward      hf_forward over them keeping layer `layer`'s every step: one warm-up,
//                     then `repeats` runs, sorted (ms)
//   time_decode       `steps` greedy tokens after them through HfDecoder's KV caches, each
//                     call's traces kept (as `attnsim-cli decode` keeps them): the single-token
//                     calls, sorted (ms); the prefill is not among them
//   HfGemmFloor       the GEMM floor: the pass's matrix products alone, through the same
//                     backend calls on the same weights (packed where the model packs), on
//                     inputs of their shapes; what the pass would cost if nothing else did
#pragma once

#include <cstdint>
#include <vector>

#include "model/formats/hf_model.h"

namespace attnsim::model::hf {

std::vector<int32_t> bench_token_ids(const HfConfig& config, int64_t length);
std::vector<double> time_forward(const HfModel& model, const std::vector<int32_t>& tokens, int64_t layer, int repeats,
                                 int64_t* layer_trace_bytes = nullptr);
std::vector<double> time_decode(const HfModel& model, const std::vector<int32_t>& prompt, int64_t steps);
// The bytes time_decode needs beyond the model (its caches and one call).
int64_t predict_decode_bytes(const HfConfig& config, int64_t prompt, int64_t steps);

// The matrix products of one pass of `rows` new tokens against `keys` positions (a forward:
// rows = keys = T; a decode step: rows 1): per layer W_Q W_K W_V W_O, q·kᵀ and alpha·v over
// every query head, the MLP's Linears; then the unembedding. Its inputs are made once, here.
// A model widened per layer (F16 / BF16) has layer 0 widened once and run for every layer: the
// floor times products, not widening.
class HfGemmFloor {
 public:
  HfGemmFloor(const HfModel& model, int64_t rows, int64_t keys);
  void run() const;
  double flops() const;  // 2 · multiply-adds

 private:
  const HfModel& model_;
  std::vector<HfLayer> widened_;  // layer 0, for a model widened per use
  Tensor x_, hidden_, q_, k_, alpha_;  // (1,rows,d) (1,rows,ff) (1,h,rows,dk) (1,h,keys,dk) (1,h,rows,keys)
};

}  // namespace attnsim::model::hf
