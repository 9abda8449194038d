// The hand-written backward of forward.cpp, in reverse order of the forward:
//   dlogits -> unembed -> ln_final -> layers L-1..0 (mlp, residual, attention, residual, ln)
//   -> embedding. The norms are LayerNorm or RMSNorm, the MLP GELU or SwiGLU, positions
//   learned or RoPE (inside attention_backward). The residual stream's gradient `dx` (B,T,d) is carried down the layers.
// Scratch buffers are engine Tensors: its buffer pool hands the same memory back each step
// (no page faults, no zeroing: every scratch buffer is written before it is read).
#include <limits>
#include <vector>

#include "engine/error.h"

#include "model/pass/layers.h"
#include "model/pass/whole_models.h"
#include "model/training/backward.h"

namespace attnsim::model {

int64_t predict_training_bytes(const ModelConfig& c, int64_t B, int64_t T) {
  validate(c);
  if (B <= 0 || T <= 0) throw Error("batch and sequence length must be positive");
  // 4 copies of the parameters (weights, grads, Adam m and v) plus, per layer, the attention
  // trace and the residual / LN / MLP activations, plus the logits and their gradient.
  // Done in long double so absurd sizes compare as large instead of wrapping.
  const long double f = 4, BT = static_cast<long double>(B) * T, d = c.d_model, V = c.vocab, kv = c.kv_dim();
  long double bytes = 4.0L * param_count(c) * f;
  const long double score = BT * T * c.heads * f;
  // scores, scaled, masked, alpha; mask; (B,T,d) q_proj, ctx_heads, ctx_contiguous, out; (B,T,g·dk) k_proj, v_proj
  const long double trace = 3 * score + BT * T + 4 * BT * d * f + 2 * BT * kv * f;
  long double per_layer = trace + score + 3 * BT * d * f + 2 * BT * kv * f;  // + the backward's dA; dctx, dq, part; dk, dv
  if (c.norms()) per_layer += 2 * BT * d * f;
  if (c.rope()) per_layer += BT * (d + kv) * f;  // q_rot, k_rot
  // mlp_up, mlp_act; SwiGLU's mlp_gate and the backward's du
  if (c.mlp) per_layer += (c.swiglu ? 4 : 2) * BT * c.mlp_dim() * f + 2 * BT * d * f;
  bytes += c.layers * per_layer + 3 * BT * V * f + 2 * BT * d * f;
  if (bytes > static_cast<long double>(std::numeric_limits<int64_t>::max() / 2))
    return std::numeric_limits<int64_t>::max() / 2;
  return static_cast<int64_t>(bytes);
}

namespace {

float* grad_or_null(Params& g, const std::string& name) {
  for (size_t i = 0; i < g.names.size(); ++i)
    if (g.names[i] == name) return g.tensors[i].f32();
  return nullptr;
}

// The backward of norm_attn / norm_mlp / norm_final (LayerNorm or RMSNorm): dy (N,d) -> dx
// (written) from the norm's input x and the statistics the forward kept.
void norm_backward(const ModelConfig& c, const Params& P, Params& grads, const std::string& name, const float* dy,
                   const Tensor& x, const Tensor& mean, const Tensor& rstd, int64_t N, float* dx) {
  const float* w = P.get(name + ".weight").f32();
  if (c.rmsnorm) rmsnorm_backward(dy, x.f32(), w, rstd.f32(), N, c.d_model, dx, grad_or_null(grads, name + ".weight"));
  else layernorm_backward(dy, x.f32(), w, mean.f32(), rstd.f32(), N, c.d_model, dx, grad_or_null(grads, name + ".weight"),
                          grad_or_null(grads, name + ".bias"));
}

}  // namespace

void backward(const Model& model, const Batch& batch, const Activations& acts, const Tensor& dlogits, Params& grads) {
  const ModelConfig& c = model.config;
  const Params& P = model.params;
  const int64_t B = batch.batch, T = batch.len, d = c.d_model, V = c.vocab, N = B * T, m = c.mlp_dim();
  Tensor dx = Tensor::empty({N * d});
  Tensor tmp = Tensor::empty({N * d});

  // unembed: logits = xf · Uᵀ + b                             (B,T,V)
  // (tied: U is embed.weight, whose gradient gathers this and the embedding's, both +=)
  const Tensor& x_last = c.layers ? acts.layers.back().x_out : acts.x0;
  const Tensor& xf = c.norms() ? acts.lnf_out : x_last;
  linear_backward(dlogits.f32(), xf.f32(), P.get(unembed_name(c)).f32(), N, d, V, dx.f32(),
                  grad_or_null(grads, unembed_name(c)), grad_or_null(grads, "unembed.bias"));
  if (c.norms()) {
    norm_backward(c, P, grads, "ln_final", dx.f32(), x_last, acts.lnf_mean, acts.lnf_rstd, N, tmp.f32());
    std::swap(dx, tmp);
  }

  for (int64_t l = c.layers - 1; l >= 0; --l) {
    const LayerActs& la = acts.layers[static_cast<size_t>(l)];
    const std::string p = "layers." + std::to_string(l) + ".";
    if (c.mlp) {
      // x_out = x_mid + fc2(gelu(fc1(h))), or under SwiGLU x_mid + fc2(silu(gate(h)) ⊙ fc1(h)),
      // h = ln2(x_mid) or x_mid: dx flows on unchanged and through the MLP into dh, then (via
      // ln2) back onto dx.
      const Tensor& h = c.norms() ? la.ln2_out : la.x_mid;
      auto up_backward = [&](const char* name, const Tensor& dy, float* dh_out) {
        linear_backward(dy.f32(), h.f32(), P.get(p + name + ".weight").f32(), N, d, m, dh_out,
                        grad_or_null(grads, p + name + ".weight"), grad_or_null(grads, p + name + ".bias"));
      };
      Tensor dg = Tensor::empty({N * m});
      Tensor dh = Tensor::empty({N * d});
      linear_backward(dx.f32(), la.gelu_out.f32(), P.get(p + "mlp.fc2.weight").f32(), N, m, d, dg.f32(),
                      grad_or_null(grads, p + "mlp.fc2.weight"), grad_or_null(grads, p + "mlp.fc2.bias"));
      if (c.swiglu) {
        Tensor du = Tensor::empty({N * m});
        swiglu_backward(dg.f32(), la.gate_out.f32(), la.fc1_out.f32(), N * m, dg.f32(), du.f32());
        up_backward("mlp.gate", dg, dh.f32());
        up_backward("mlp.fc1", du, tmp.f32());
        for (int64_t i = 0; i < N * d; ++i) dh.f32()[i] += tmp.f32()[i];
      } else {
        gelu_backward(dg.f32(), la.fc1_out.f32(), N * m, dg.f32());
        up_backward("mlp.fc1", dg, dh.f32());
      }
      if (c.norms()) {
        norm_backward(c, P, grads, p + "ln2", dh.f32(), la.x_mid, la.ln2_mean, la.ln2_rstd, N, tmp.f32());
        std::swap(dh, tmp);
      }
      for (int64_t i = 0; i < N * d; ++i) dx.f32()[i] += dh.f32()[i];
    }
    // x_mid = x_in + attn(a_in), a_in = ln(x_in) or x_in
    Tensor da = Tensor::empty({N * d});
    const AttnGrads g{grad_or_null(grads, p + "attn.W_Q.weight"), grad_or_null(grads, p + "attn.W_Q.bias"),
                      grad_or_null(grads, p + "attn.W_K.weight"), grad_or_null(grads, p + "attn.W_K.bias"),
                      grad_or_null(grads, p + "attn.W_V.weight"), grad_or_null(grads, p + "attn.W_V.bias"),
                      grad_or_null(grads, p + "attn.W_O.weight"), grad_or_null(grads, p + "attn.W_O.bias")};
    attention_backward(la.attn, attention_weights(model, l), c.heads, c.rope_theta, la.ablated, dx.f32(), g, da.f32());
    if (c.norms()) {
      norm_backward(c, P, grads, p + "ln", da.f32(), la.x_in, la.ln_mean, la.ln_rstd, N, tmp.f32());
      std::swap(da, tmp);
    }
    for (int64_t i = 0; i < N * d; ++i) dx.f32()[i] += da.f32()[i];
  }

  embedding_backward(dx.f32(), batch.tokens.data(), B, T, d, grad_or_null(grads, "embed.weight"),
                     grad_or_null(grads, "pos_embed.weight"));
}

}  // namespace attnsim::model
