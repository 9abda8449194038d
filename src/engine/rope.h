// Rotary position embedding (RoPE), in Hugging Face's rotate_half convention (Llama, Qwen2,
// modeling_llama.py's apply_rotary_pos_emb):
//   inv_freq[i] = 1 / theta^(2i/dk)                 i = 0 .. dk/2-1
//   angle[p][i] = p · inv_freq[i]                   p = the token's absolute position
//   cos, sin    = cos/sin of cat(angle, angle)      (T, dk): the two halves share a frequency
//   rotate_half(x) = cat(-x[dk/2:], x[:dk/2])
//   x_rot = x · cos + rotate_half(x) · sin          (B,h,T,dk), new storage
// so dimension i and i + dk/2 form one pair, turned by angle p·inv_freq[i]. (The original
// RoFormer pairs neighbours 2i, 2i+1; HF permutes the weights instead.) Angles are taken in
// float32 as HF does, so long positions round as they do there.
//
// Llama 3.1 / 3.2's "llama3" rope_scaling (modeling_rope_utils.py) stretches the slow pairs
// for a longer context: with wavelen = 2π / inv_freq, L = original_max_position_embeddings,
//   wavelen < L / high_freq_factor   kept                       (fast pairs: local order)
//   wavelen > L / low_freq_factor    inv_freq / factor          (slow pairs)
//   between                          (1 - s)·inv_freq/factor + s·inv_freq,
//                                    s = (L / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
#pragma once

#include <cstdint>
#include <vector>

#include "tensor.h"

namespace attnsim {

struct RopeScaling {
  double factor = 0;  // 0: none (plain RoPE); else llama3 scaling by this factor
  double low_freq_factor = 1, high_freq_factor = 4;
  double original_max = 8192;  // original_max_position_embeddings
};

// cos and sin of every (position, pair): row t at position position0 + t, pair i, (T, dk/2)
// each, in float32 as HF takes them. rope_rotate turns by them; the trainer's backward
// (model/pass/layers.h) turns its gradients back by the same table.
struct RopeTable {
  int64_t half = 0;           // dk/2
  std::vector<float> cos, sin;  // [t·half + i]
};
RopeTable rope_table(int64_t T, int64_t head_dim, int64_t position0, double theta, const RopeScaling& scaling = {});

// x (B,h,T,dk), any strides, dk even; row t of x sits at position position0 + t.
// Returns the rotated copy, contiguous (B,h,T,dk). Throws Error for an odd dk or theta <= 0.
Tensor rope_rotate(const Tensor& x, int64_t position0, double theta, const RopeScaling& scaling = {});

// The frequency of pair i, as float32 (HF: 1.0 / base ** (arange(0, dk, 2).float() / dk)),
// then llama3-scaled when scaling.factor > 0.
float rope_inv_freq(int64_t i, int64_t head_dim, double theta, const RopeScaling& scaling = {});

}  // namespace attnsim
