#include "rope.h"

#include <cmath>
#include <string>
#include <vector>

#include "error.h"
#include "parallel.h"

namespace attnsim {

float rope_inv_freq(int64_t i, int64_t dk, double theta, const RopeScaling& r) {
  const float exponent = static_cast<float>(2 * i) / static_cast<float>(dk);
  const float f = static_cast<float>(1.0 / std::pow(theta, static_cast<double>(exponent)));
  if (r.factor <= 0) return f;
  const double wavelen = 2 * M_PI / f;
  if (wavelen < r.original_max / r.high_freq_factor) return f;
  if (wavelen > r.original_max / r.low_freq_factor) return static_cast<float>(f / r.factor);
  const double s = (r.original_max / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
  return static_cast<float>((1 - s) * f / r.factor + s * f);
}

namespace {

void check_rope(const Tensor& x, double theta) {
  if (x.dim() != 4) throw Error("rope expects (B,h,T,dk), got " + format_dims(x.shape()));
  if (x.size(3) % 2 != 0)
    throw Error("rope needs an even head dimension to pair i with i + dk/2, got dk = " + std::to_string(x.size(3)));
  if (!(theta > 0) || !std::isfinite(theta)) throw Error("rope theta must be a positive number, got " + std::to_string(theta));
}

}  // namespace

RopeTable rope_table(int64_t T, int64_t dk, int64_t position0, double theta, const RopeScaling& scaling) {
  RopeTable r{dk / 2, std::vector<float>(static_cast<size_t>(T * (dk / 2))), std::vector<float>(static_cast<size_t>(T * (dk / 2)))};
  for (int64_t i = 0; i < r.half; ++i) {
    const float f = rope_inv_freq(i, dk, theta, scaling);
    for (int64_t t = 0; t < T; ++t) {
      const float angle = static_cast<float>(position0 + t) * f;  // float32, as HF
      r.cos[static_cast<size_t>(t * r.half + i)] = std::cos(angle);
      r.sin[static_cast<size_t>(t * r.half + i)] = std::sin(angle);
    }
  }
  return r;
}

Tensor rope_rotate(const Tensor& x, int64_t position0, double theta, const RopeScaling& scaling) {
  check_rope(x, theta);
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), dk = x.size(3), half = dk / 2;
  // pass 1: cos and sin per (position, pair), shared by every batch row and head   (T, dk/2)
  const RopeTable table = rope_table(T, dk, position0, theta, scaling);
  const std::vector<float>&cosv = table.cos, &sinv = table.sin;
  // pass 2: turn each pair (i, i + dk/2) of every row                       (B,h,T,dk)
  Tensor out = Tensor::empty({B, H, T, dk});
  const Dims& s = x.strides();
  const float* px = x.f32();
  float* po = out.f32();
  parallel_for(B * H, 1, [&](int64_t first, int64_t last) {
    for (int64_t bh = first; bh < last; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      for (int64_t t = 0; t < T; ++t) {
        const float* row = px + b * s[0] + h * s[1] + t * s[2];
        float* o = po + (bh * T + t) * dk;
        const float* c = cosv.data() + t * half;
        const float* sn = sinv.data() + t * half;
        for (int64_t i = 0; i < half; ++i) {
          const float x1 = row[i * s[3]], x2 = row[(i + half) * s[3]];
          o[i] = x1 * c[i] - x2 * sn[i];
          o[i + half] = x2 * c[i] + x1 * sn[i];
        }
      }
    }
  });
  return out;
}

}  // namespace attnsim
