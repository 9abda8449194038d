#include "model/pass/pass_ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/error.h"
#include "engine/vector_exp.h"
#include "model/pass/layers.h"

namespace attnsim::model {

// [SECTION] norms

Tensor apply_norm(NormKind kind, const Tensor& x, const Tensor& w, const Tensor& b, double eps, NormStats* stats) {
  const int64_t B = x.size(0), T = x.size(1), d = x.size(2);
  Tensor y = Tensor::empty({B, T, d});  // (B,T,d)
  const float* in = x.f32();
  float* out = y.f32();
  switch (kind) {
    case NormKind::LayerNorm: {
      NormStats s{Tensor::empty({B, T}), Tensor::empty({B, T})};
      layernorm_forward(in, w.f32(), b.f32(), B * T, d, out, s.mean.f32(), s.rstd.f32(), eps);
      if (stats) *stats = std::move(s);
      return y;
    }
    case NormKind::RmsNorm: {
      Tensor rstd = stats ? Tensor::empty({B, T}) : Tensor();
      for (int64_t t = 0; t < B * T; ++t) {
        const float* xr = in + t * d;
        double ss = 0;
        for (int64_t i = 0; i < d; ++i) ss += static_cast<double>(xr[i]) * xr[i];
        const float r = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(d) + eps));
        for (int64_t i = 0; i < d; ++i) out[t * d + i] = w.f32()[i] * (xr[i] * r);
        if (stats) rstd.f32()[t] = r;
      }
      if (stats) *stats = NormStats{Tensor(), std::move(rstd)};
      return y;
    }
    case NormKind::None: break;
  }
  throw Error("apply_norm: this model has no norm");
}

Tensor apply_norm_reference(NormKind kind, const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  const int64_t T = x.size(1), d = x.size(2);
  Tensor y = Tensor::empty({1, T, d});
  for (int64_t t = 0; t < T; ++t) {
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < d; ++i) mean += x.at({0, t, i});
    mean = kind == NormKind::LayerNorm ? mean / static_cast<double>(d) : 0.0;  // RMSNorm does not centre
    for (int64_t i = 0; i < d; ++i) sq += (x.at({0, t, i}) - mean) * (x.at({0, t, i}) - mean);
    const double r = 1.0 / std::sqrt(sq / static_cast<double>(d) + eps);
    for (int64_t i = 0; i < d; ++i) {
      double v = (x.at({0, t, i}) - mean) * r * w.at({i});
      if (kind == NormKind::LayerNorm) v += b.at({i});
      y.f32()[t * d + i] = static_cast<float>(v);
    }
  }
  return y;
}

// [SECTION] activations

namespace {

// y = x · sigmoid(a·x + b·x³) (y may be x), with the vector exp:
//   gelu_new(x) = 0.5·x·(1 + tanh(z)) = x · sigmoid(2z),  z = √(2/π)·(x + 0.044715·x³)
//   silu(x)     = x · sigmoid(x)
// The exponent is clamped to [-80, 80] (clamp_exp_arguments): a very negative x gives
// x / e^80, within 1e-33 of the limit -0, and the vector exp stays on its fast path.
void times_sigmoid(const float* x, int64_t n, float a, float b, float* y) {
  constexpr int64_t kChunk = 1024;
  float t[kChunk];
  for (int64_t first = 0; first < n; first += kChunk) {
    const int64_t m = std::min(kChunk, n - first);
    const float* p = x + first;
    if (b == 0.0f) {  // SiLU: no cubic term, whose 0 · inf would make silu(inf) NaN
      for (int64_t i = 0; i < m; ++i) t[i] = -(a * p[i]);
    } else {
      for (int64_t i = 0; i < m; ++i) t[i] = -(a * p[i] + b * p[i] * p[i] * p[i]);
    }
    clamp_exp_arguments(t, m);
    (void)exp_shifted_sum(t, 0.0f, t, m);  // t = exp(-(a·x + b·x³))
    for (int64_t i = 0; i < m; ++i) y[first + i] = p[i] / (1.0f + t[i]);
  }
}

}  // namespace

void activate(Activation act, const float* x, int64_t n, float* y) {
  const float k = 2.0f * std::sqrt(2.0f / static_cast<float>(M_PI));  // 2z = k·x + 0.044715·k·x³
  switch (act) {
    case Activation::GeluErf: gelu_forward(x, n, y); return;
    case Activation::GeluTanh: times_sigmoid(x, n, k, 0.044715f * k, y); return;
    case Activation::Silu: times_sigmoid(x, n, 1.0f, 0.0f, y); return;
  }
}

void activate_reference(Activation act, const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    double r = 0;
    switch (act) {
      case Activation::GeluErf: r = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); break;
      case Activation::GeluTanh: r = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))); break;
      case Activation::Silu: r = v / (1.0 + std::exp(-v)); break;
    }
    y[i] = static_cast<float>(r);
  }
}


}  // namespace attnsim::model
