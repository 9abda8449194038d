// The steps every forward pass shares, whatever computes the attention core (the standard
// path in mha.cpp, the tiled path in flash_forward.cpp):
//   before the core: query key value, q/k/v_proj, q/k/v_view, q/k/v_heads, q_rot k_rot
//   after the core:  ctx_transposed, ctx_contiguous, ctx_concat, out
#pragma once

#include <string>
#include <vector>

#include "mha.h"

namespace attnsim {

Step input_step(const char* name, const Tensor& t);
// A step that made `t`; views carry no backend (nothing was computed).
Step made_step(const char* name, const std::string& op, std::vector<std::string> inputs, StepKind kind,
               const Tensor& t, const std::string& backend);
Step skipped_step(const char* name, const std::string& op, std::vector<std::string> inputs, std::string why);

// What the attention core reads: the head views, or with RoPE the rotated q and k.
struct Heads {
  Tensor q, k, v;  // (B,h,Tq,dk) (B,g,Tk,dk) (B,g,Tk,dk)
  const char* q_name = "q_heads";  // "q_rot" with RoPE
  const char* k_name = "k_heads";  // "k_rot" with RoPE
};

// Adds the inputs, the projections, the head split and q_rot / k_rot (skipped without RoPE:
// c.rope_theta == 0) to `t`; returns what the core reads. When
// `earlier` read the same input and weight tensors (Tensor::same_view_as) at the same head
// sizes on the same backend, its steps are taken as they are (values, counts; the storages
// are shared) instead of computed: tensors are never written once made, so they are equal.
Heads add_head_steps(Trace& t, const MhaConfig& c, const MhaWeights& w, const MhaInputs& in, Backend& be,
                     const Trace* earlier = nullptr);

// What a finished trace's core read: q_rot / k_rot when they ran, else q_heads / k_heads.
const Tensor& core_q(const Trace& t);
const Tensor& core_k(const Trace& t);

// What the attention core reads for K and V: the head tensors themselves (g == h), the
// stride-0 group views (B,g,r,Tk,dk), or the repeat_interleave copies (B,h,Tk,dk).
struct KvRead {
  Tensor k, v;
  const char* k_name = "k_heads";
  const char* v_name = "v_heads";
};

// With g < h adds k_grouped and v_grouped, made from k and v (B,g,Tk,dk) named k_from and
// v_from; with g == h adds nothing and returns k and v as they are. `known` counts, when
// given, are the NaN/inf counts of k and v (the grouped view repeats each element r times).
KvRead add_group_steps(Trace& t, const MhaConfig& c, const Tensor& k, const Tensor& v, const char* k_from,
                       const char* v_from, Backend& be);

// q·kᵀ and alpha·v through whichever of the backend's ops fits what KvRead holds.
Tensor core_qk(Backend& be, const Tensor& q, const Tensor& k);
Tensor core_av(Backend& be, const Tensor& alpha, const Tensor& v);

// Adds ctx_transposed, ctx_contiguous, ctx_concat and out after the core's ctx_heads.
void add_merge_steps(Trace& t, const MhaConfig& c, const MhaWeights& w, const Tensor& ctx_heads, Backend& be);

}  // namespace attnsim
