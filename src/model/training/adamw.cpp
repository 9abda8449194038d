#include "model/training/adamw.h"

#include <cmath>

#include "engine/fixed_math.h"

namespace attnsim::model {

void validate(const AdamWConfig& c) {
  check_real(c.lr, "lr", kLrRange);
  check_real(c.weight_decay, "weight_decay", kWeightDecayRange);
  check_real(c.clip, "clip", kClipRange);
  check_range(c.warmup, "warmup", 0, kMaxWarmup);
}

float learning_rate(const AdamWConfig& c, int64_t step) {
  if (c.warmup > 0 && step < c.warmup) return c.lr * static_cast<float>(step + 1) / static_cast<float>(c.warmup);
  if (c.total <= c.warmup) return c.lr;
  const double progress = std::min(1.0, static_cast<double>(step - c.warmup) / static_cast<double>(c.total - c.warmup));
  const double cosine = 0.5 * (1.0 + fixed::cos(3.141592653589793 * progress));
  return static_cast<float>(c.lr * (c.min_ratio + (1.0 - c.min_ratio) * cosine));
}

double global_norm(const Params& grads) {
  double sum = 0;
  for (const Tensor& g : grads.tensors) {
    const float* x = g.f32();
    for (int64_t i = 0, n = g.numel(); i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  }
  return std::sqrt(sum);
}

AdamW::AdamW(const Params& params, AdamWConfig config) : c_(config), m_(zeros_like(params)), v_(zeros_like(params)) {}

double AdamW::step(Params& params, Params& grads) {
  const double norm = global_norm(grads);
  if (c_.clip > 0 && norm > c_.clip) {
    const float k = static_cast<float>(c_.clip / (norm + 1e-6));
    for (Tensor& g : grads.tensors) {
      float* x = g.f32();
      for (int64_t i = 0, n = g.numel(); i < n; ++i) x[i] *= k;
    }
  }
  const float lr = learning_rate(c_, t_);
  ++t_;
  // beta^t through fixed_math (glibc's pow differs in the last bit between CPUs)
  const auto power = [&](float beta) { return static_cast<float>(fixed::exp(static_cast<double>(t_) * fixed::log(beta))); };
  const float bc1 = 1.0f - power(c_.beta1);
  const float bc2 = 1.0f - power(c_.beta2);
  // the constants in locals: stores through w, m, v could alias c_, which stops vectorising
  const float beta1 = c_.beta1, beta2 = c_.beta2, eps = c_.eps;
  for (size_t k = 0; k < params.tensors.size(); ++k) {
    Tensor& p = params.tensors[k];
    const float decay = p.dim() >= 2 ? 1.0f - lr * c_.weight_decay : 1.0f;
    float* w = p.f32();
    const float* g = grads.tensors[k].f32();
    float* m = m_.tensors[k].f32();
    float* v = v_.tensors[k].f32();
    for (int64_t i = 0, n = p.numel(); i < n; ++i) {
      w[i] *= decay;
      m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
      v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
      w[i] -= lr * (m[i] / bc1) / (std::sqrt(v[i] / bc2) + eps);
    }
  }
  return norm;
}

}  // namespace attnsim::model
