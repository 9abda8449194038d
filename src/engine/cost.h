// Cost model: closed-form parameter and byte counts for multi-head attention.
// Every figure a lesson or quiz states comes from here.
//
//   params (4 projections)  = 4·d²  (+ 4·d with biases)
//   score tensor per layer  = B·h·T²·bytes
//   KV cache                = B·layers·2·g·T·dk·bytes   (g = kv heads; g = h for MHA)
//   KV cache per token      = layers·2·g·dk·bytes       (one more position of one sequence)
//   paged cache             = Σ ceil(len/block)·block positions, vs B·T_max contiguous
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnsim {

enum class CostDType { FP32, FP16, BF16, INT8 };
CostDType parse_cost_dtype(const std::string& name);  // throws Error
const char* cost_dtype_name(CostDType dtype);
int64_t cost_dtype_bytes(CostDType dtype);

struct CostConfig {
  int64_t d_model = 512;
  int64_t heads = 8;
  int64_t layers = 1;
  int64_t seq = 128;
  int64_t batch = 1;
  int64_t kv_heads = 0;  // 0 means = heads
  CostDType dtype = CostDType::FP32;

  int64_t head_dim() const { return d_model / heads; }
  int64_t effective_kv_heads() const { return kv_heads ? kv_heads : heads; }
};

void validate(const CostConfig& config);  // throws Error

struct Cost {
  int64_t params_no_bias;       // 4·d²
  int64_t params_with_bias;     // 4·d² + 4·d
  int64_t param_bytes;          // params_with_bias · bytes
  int64_t score_elements;       // B·h·T² per layer
  int64_t score_bytes_layer;
  int64_t score_bytes_model;    // · layers
  int64_t kv_cache_bytes;       // with all h heads
  int64_t kv_cache_bytes_grouped;  // with kv_heads heads
  int64_t kv_bytes_per_token;   // layers·2·g·dk·bytes (g = kv_heads)
  int64_t qk_flops_layer;       // 2·B·h·T²·dk  (= 2·B·T²·d, independent of h)
  int64_t projection_flops_layer;  // 4 · 2·B·T·d²
};

Cost compute_cost(const CostConfig& config);

// A batch of sequences of different lengths, cached two ways (bytes use kv_bytes_per_token):
// contiguous preallocates T_max positions per sequence; paged allocates whole blocks as
// positions arrive, so each sequence wastes less than one block.
struct PagedWaste {
  int64_t used_bytes;        // Σ len
  int64_t contiguous_bytes;  // sequences · T_max
  int64_t paged_bytes;       // Σ ceil(len / block) · block
  int64_t blocks;            // Σ ceil(len / block)
};
// Throws Error for a block of 0, a length of 0 or a length over t_max.
PagedWaste paged_waste(const CostConfig& config, const std::vector<int64_t>& lengths, int64_t block, int64_t t_max);

// "6,871,947,673 B (6.40 GiB, 6.87 GB)"
std::string format_bytes(int64_t bytes);
std::string format_count(int64_t n);  // "1,048,576"
std::string human_bytes(int64_t bytes);  // "6.40 GiB"

// Named quantities for lessons and quizzes: "params_no_bias", "kv_cache_bytes", ...
// Throws Error for an unknown name.
double cost_quantity(const Cost& cost, const std::string& name);
const std::vector<std::string>& cost_quantity_names();

}  // namespace attnsim
