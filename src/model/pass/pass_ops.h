// The layers around attention in the whole pass (whole_pass.cpp), shared by every model: the norms and the MLP activations, each fast path with
// its plain-loop reference in double beside it (the oracle of tests/test_whole_pass.cpp).
#pragma once

#include <cstdint>

#include "engine/tensor.h"

namespace attnsim::model {

enum class NormKind {
  None,       // the toy model without --layernorm: the stream goes through unchanged
  LayerNorm,  // (x − mean) / sqrt(var + eps) · w + b    GPT-2, the toy model
  RmsNorm,    // x / sqrt(mean(x²) + eps) · w            Llama, Qwen2
};
enum class Activation {
  GeluErf,   // x · Φ(x)                                        torch.nn.GELU(), the toy model
  GeluTanh,  // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))     GPT-2's gelu_new
  Silu,      // x · sigmoid(x)                                  SwiGLU's gate
};

// A norm's statistics per row, what its backward reads (layers.h).
struct NormStats {
  Tensor mean, rstd;  // (B,T) each; RMSNorm keeps rstd = 1/sqrt(mean(x²) + eps) only
};
// x (B,T,d) -> (B,T,d), new storage. b is ignored by RMSNorm; NormKind::None is an Error.
// `stats` receives each row's mean (LayerNorm) and 1/std.
Tensor apply_norm(NormKind kind, const Tensor& x, const Tensor& w, const Tensor& b, double eps,
                  NormStats* stats = nullptr);
Tensor apply_norm_reference(NormKind kind, const Tensor& x, const Tensor& w, const Tensor& b, double eps);

// y[i] = act(x[i]) for i < n (the vector exp of engine/vector_exp.h for tanh and sigmoid); y may be x.
void activate(Activation act, const float* x, int64_t n, float* y);
// y[i] = act(x[i]) in double, one element at a time.
void activate_reference(Activation act, const float* x, int64_t n, float* y);


}  // namespace attnsim::model
