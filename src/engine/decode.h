// Decode: attention over a KV cache, one layer at a time, each call a named trace.
//
// A call takes the n new rows x (B,n,d) of every sequence, positions t..t+n-1 (a prefill
// has n = prompt length, a decode step n = 1), and lists, in kStepNames order:
//   query key value                 x                                  (B,n,d)
//   q_proj k_proj v_proj            projections                        (B,n,d) (B,n,g·dk)
//   q_view .. v_heads               as forward()                       (B,h,n,dk) (B,g,n,dk)
//   k_cache_append v_cache_append   k_heads / v_heads written into     (B,g,n,dk) views of the
//                                   the preallocated slots (a copy)    cache's storage
//   k_cache v_cache                 the filled part, narrow view       (B,g,t',dk), t' = filled slots
//   k_grouped v_grouped             g < h: stride-0 group view         (B,g,h/g,t',dk)
//   scores .. alpha                 one row per new token              (B,h,n,t')
//   mask                            causal among the n new rows; skipped when n = 1
//   ctx_heads .. out                as forward()                       (B,n,d)
// Decoding token by token gives forward()'s causal outputs to rounding (tests/test_decode.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "kv_cache.h"
#include "mha.h"

namespace attnsim {

// The MhaConfig of one cached call: config's sizes with tq = tk = n, self-attention, no mask.
MhaConfig cached_call_config(const MhaConfig& config, int64_t batch, int64_t n);

// x (B,n,d) through one layer whose K/V live in `cache` (contiguous).
Trace attend_cached(const MhaConfig& config, const MhaWeights& weights, KvCache& cache, const Tensor& x,
                    Backend& backend = cpu_backend());

// x (1,n,d) of one sequence through one layer whose K/V live in the block pool `kv`; the
// table must already hold blocks for table.length + n positions (reserve_blocks). The
// caller advances table.length after the last layer.
Trace attend_paged(const MhaConfig& config, const MhaWeights& weights, PagedKv& kv, const BlockTable& table,
                   const Tensor& x, Backend& backend = cpu_backend());

// Bytes one decode step must read at least: the four weight matrices (and biases) and the
// cache's filled K and V. The floor that memory bandwidth puts under the step's time.
int64_t decode_step_read_bytes(const MhaConfig& config, int64_t batch, int64_t filled);

}  // namespace attnsim
