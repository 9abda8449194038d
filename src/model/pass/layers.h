// The model's layers as forward / backward pairs over row-major float buffers, written next
// to each other so each backward can be read against its forward (llm.c's habit). Every
// backward ACCUMULATES (+=) into its parameter gradients and WRITES its input gradient,
// unless its comment says otherwise. N = B·T rows.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/mha.h"
#include "engine/trace.h"

namespace attnsim::model {

// y (N,out) = x (N,in) · Wᵀ + b, W (out,in), b (out) or nullptr.  (The forward is the
// engine backend's linear; this is its backward.)
//   dx (N,in) = dy · W (written; skipped when dx is nullptr)
//   dW (out,in) += dyᵀ · x,  db (out) += Σ_rows dy
void linear_backward(const float* dy, const float* x, const float* W, int64_t N, int64_t in, int64_t out,
                     float* dx, float* dW, float* db);

// y = (x - mean) · rstd · w + b over the last axis (d), eps 1e-5 as torch.nn.LayerNorm
// (GPT-2 passes its layer_norm_epsilon). mean, rstd (N) are kept for the backward.
void layernorm_forward(const float* x, const float* w, const float* b, int64_t N, int64_t d, float* y,
                       float* mean, float* rstd, double eps = 1e-5);
// dx written; dw, db accumulated.
void layernorm_backward(const float* dy, const float* x, const float* w, const float* mean, const float* rstd,
                        int64_t N, int64_t d, float* dx, float* dw, float* db);

// RMSNorm's backward, y = x · rstd · w with rstd = 1/sqrt(mean(x²) + eps) per row (the forward
// is pass_ops.h's apply_norm, which keeps rstd (N)):
//   dx = rstd · (dy⊙w − x · rstd² · mean(dy⊙w⊙x))   (written);  dw += Σ_rows dy ⊙ x · rstd
void rmsnorm_backward(const float* dy, const float* x, const float* w, const float* rstd, int64_t N, int64_t d,
                      float* dx, float* dw);

// SwiGLU's middle, a = silu(g) ⊙ u (the forward is the pass's mlp_act), n elements:
//   du = da ⊙ silu(g),  dg = da ⊙ u ⊙ σ(g)·(1 + g·(1 − σ(g)))   (both written; dg may be da)
void swiglu_backward(const float* da, const float* g, const float* u, int64_t n, float* dg, float* du);

// GELU with erf, as torch.nn.GELU(): y = x · Φ(x).
void gelu_forward(const float* x, int64_t n, float* y);
// dx = dy · (Φ(x) + x·φ(x))   (written)
void gelu_backward(const float* dy, const float* x, int64_t n, float* dx);

// the backward of the pass's embed step, x0[b,t] = embed[tokens[b,t]] + pos[t]   (B,T,d):
// d_embed[tokens[b,t]] += dx0[b,t];  d_pos[t] += Σ_b dx0[b,t]  (in a fixed order: deterministic;
// d_pos nullptr under RoPE, which has no pos_embed)
void embedding_backward(const float* dx0, const int32_t* tokens, int64_t B, int64_t T, int64_t d,
                        float* d_embed, float* d_pos);

// Attention backward through the engine's trace of one layer (steps query, q_heads, k_heads,
// v_heads, alpha, ctx_concat; causal mask, no dropout):
//   dout (B,T,d)  ->  dW_O, db_O, then per (b,h): dalpha = dctx·vᵀ, dv = alphaᵀ·dctx,
//   dscores = alpha ⊙ (dalpha − Σ_j dalpha⊙alpha) · scale, dq = dscores·k, dk = dscoresᵀ·q,
//   then through the three projections into dx (B,T,d) (written).
// GQA (k_proj (B,T,g·dk), g < h): query head hh read K/V head hh/(h/g), so a K/V head's dk
// and dv are the sums over the h/g query heads of its group.
// Heads listed in `ablated` had their ctx replaced by a constant: no gradient flows into them.
// RoPE (rope_theta > 0; the trace's q_rot, k_rot): the scores read the turned q and k, so dq
// and dk come out turned, and go back through RoPE's transpose (each pair turned by −angle)
// before the projections.
struct AttnGrads {
  float *dWq, *dbq, *dWk, *dbk, *dWv, *dbv, *dWo, *dbo;  // biases may be nullptr
};
void attention_backward(const Trace& trace, const MhaWeights& w, int64_t heads, double rope_theta,
                        const std::vector<int64_t>& ablated, const float* dout, const AttnGrads& g, float* dx);

}  // namespace attnsim::model
