#include "reference.h"

#include <cmath>

#include "error.h"
#include "half.h"
#include "random.h"
#include "rope.h"

namespace attnsim::reference {

namespace {

// Element (i0, i1, i2, i3) of a 4-D view, read through its strides.
float get4(const Tensor& t, int64_t a, int64_t b, int64_t c, int64_t d) {
  const Dims& s = t.strides();
  return t.f32()[a * s[0] + b * s[1] + c * s[2] + d * s[3]];
}

bool hidden(const Tensor& mask, int64_t a, int64_t b, int64_t c, int64_t d) {
  const Dims& s = mask.strides();
  return mask.b8()[a * s[0] + b * s[1] + c * s[2] + d * s[3]] != 0;
}

void require_dims(const Tensor& t, int64_t n, const char* what) {
  if (t.dim() != n) throw Error(std::string(what) + " expects " + std::to_string(n) + "-D input, got " + format_dims(t.shape()));
}

float to_half(float x) { return round_to_half(x); }

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  require_dims(x, 3, "linear");
  const int64_t B = x.size(0), T = x.size(1), in = x.size(2), out_dim = weight.size(0);
  Tensor y = Tensor::empty({B, T, out_dim});  // (B,T,out)
  const Dims& xs = x.strides();
  const Dims& ws = weight.strides();
  float* py = y.f32();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t o = 0; o < out_dim; ++o) {
        float acc = bias.defined() ? bias.f32()[o * bias.strides()[0]] : 0.0f;
        for (int64_t i = 0; i < in; ++i)
          acc += x.f32()[b * xs[0] + t * xs[1] + i * xs[2]] * weight.f32()[o * ws[0] + i * ws[1]];
        *py++ = acc;
      }
  return y;
}

Tensor qk(const Tensor& q, const Tensor& k) {
  require_dims(q, 4, "qk");
  const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), Tk = k.size(2), dk = q.size(3);
  Tensor s = Tensor::empty({B, H, Tq, Tk});  // (B,h,Tq,Tk)
  float* ps = s.f32();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Tq; ++i)
        for (int64_t j = 0; j < Tk; ++j) {
          float acc = 0.0f;
          for (int64_t c = 0; c < dk; ++c) acc += get4(q, b, h, i, c) * get4(k, b, h, j, c);
          *ps++ = acc;
        }
  return s;
}

SoftmaxSteps scale_mask_softmax(const Tensor& scores, const SoftmaxSpec& spec) {
  require_dims(scores, 4, "softmax");
  const int64_t B = scores.size(0), H = scores.size(1), Tq = scores.size(2), Tk = scores.size(3);
  SoftmaxSteps out;
  // pass 1: scale                                         scaled (B,h,Tq,Tk)
  out.scaled = Tensor::empty(scores.shape());
  float* sc = out.scaled.f32();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Tq; ++i)
        for (int64_t j = 0; j < Tk; ++j) *sc++ = get4(scores, b, h, i, j) * spec.scale;
  // pass 2: mask                                          masked (B,h,Tq,Tk)
  const Tensor* logits = &out.scaled;
  if (spec.mask.defined()) {
    out.masked = out.scaled.clone();
    float* m = out.masked.f32();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < Tq; ++i)
          for (int64_t j = 0; j < Tk; ++j, ++m) {
            const bool hid = hidden(spec.mask, b, h, i, j);
            if (spec.additive) *m += hid ? 1.0f : 0.0f;
            else if (hid) *m = spec.fill;
            if (spec.mask2.defined() && hidden(spec.mask2, b, h, i, j)) *m = spec.fill;
          }
    logits = &out.masked;
  }
  // pass 3: softmax along spec.axis                        alpha (B,h,Tq,Tk)
  out.alpha = Tensor::empty(scores.shape());
  const bool rows = spec.axis == -1;
  const int64_t outer = rows ? Tq : Tk, inner = rows ? Tk : Tq;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t r = 0; r < outer; ++r) {
        auto at = [&](const Tensor& t, int64_t e) -> float& {
          const int64_t i = rows ? r : e, j = rows ? e : r;
          return const_cast<float*>(t.f32())[((b * H + h) * Tq + i) * Tk + j];
        };
        if (spec.fp16_no_max) {  // half precision, exp(x) with no max subtracted
          float sum = 0.0f;
          for (int64_t e = 0; e < inner; ++e) {
            at(out.alpha, e) = to_half(std::exp(to_half(at(*logits, e))));
            sum = to_half(sum + at(out.alpha, e));
          }
          for (int64_t e = 0; e < inner; ++e) at(out.alpha, e) = to_half(at(out.alpha, e) / sum);
          continue;
        }
        float mx = -INFINITY;
        for (int64_t e = 0; e < inner; ++e) mx = std::fmax(mx, at(*logits, e));
        float sum = 0.0f;
        for (int64_t e = 0; e < inner; ++e) {
          at(out.alpha, e) = std::exp(at(*logits, e) - mx);  // all hidden: -inf - -inf = NaN
          sum += at(out.alpha, e);
        }
        for (int64_t e = 0; e < inner; ++e) at(out.alpha, e) /= sum;
      }
  return out;
}

Tensor dropout(const Tensor& alpha, float p, uint64_t seed) {
  Tensor out = Tensor::empty(alpha.shape());
  const std::vector<float> a = alpha.to_vector();
  for (int64_t i = 0; i < out.numel(); ++i)
    out.f32()[i] = dropout_keeps(seed, static_cast<uint64_t>(i), p) ? a[i] / (1.0f - p) : 0.0f;
  return out;
}

Tensor av(const Tensor& alpha, const Tensor& v) {
  require_dims(alpha, 4, "av");
  const int64_t B = alpha.size(0), H = alpha.size(1), Tq = alpha.size(2), Tk = alpha.size(3);
  const int64_t dk = v.size(3);
  Tensor c = Tensor::empty({B, H, Tq, dk});  // (B,h,Tq,dk)
  float* pc = c.f32();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Tq; ++i)
        for (int64_t d = 0; d < dk; ++d) {
          float acc = 0.0f;
          for (int64_t j = 0; j < Tk; ++j) acc += get4(alpha, b, h, i, j) * get4(v, b, h, j, d);
          *pc++ = acc;
        }
  return c;
}

// The grouped forms index K/V head j = i / r directly: the loop a reader checks the
// stride-0 view against (head i = j·r + s reads k[b, j, s, ., .], and s's stride is 0).
Tensor qk_grouped(const Tensor& q, const Tensor& k) {
  require_dims(q, 4, "qk_grouped");
  require_dims(k, 5, "qk_grouped");
  const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), Tk = k.size(3), dk = q.size(3);
  const int64_t r = k.size(2);
  Tensor s = Tensor::empty({B, H, Tq, Tk});  // (B,h,Tq,Tk)
  float* ps = s.f32();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Tq; ++i)
        for (int64_t j = 0; j < Tk; ++j) {
          float acc = 0.0f;
          for (int64_t c = 0; c < dk; ++c) acc += get4(q, b, h, i, c) * k.at({b, h / r, h % r, j, c});
          *ps++ = acc;
        }
  return s;
}

Tensor av_grouped(const Tensor& alpha, const Tensor& v) {
  require_dims(alpha, 4, "av_grouped");
  require_dims(v, 5, "av_grouped");
  const int64_t B = alpha.size(0), H = alpha.size(1), Tq = alpha.size(2), Tk = alpha.size(3);
  const int64_t dk = v.size(4), r = v.size(2);
  Tensor c = Tensor::empty({B, H, Tq, dk});  // (B,h,Tq,dk)
  float* pc = c.f32();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Tq; ++i)
        for (int64_t d = 0; d < dk; ++d) {
          float acc = 0.0f;
          for (int64_t j = 0; j < Tk; ++j) acc += get4(alpha, b, h, i, j) * v.at({b, h / r, h % r, j, d});
          *pc++ = acc;
        }
  return c;
}

Tensor rope(const Tensor& x, int64_t position0, double theta, const RopeScaling& scaling) {
  require_dims(x, 4, "rope");
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), dk = x.size(3), half = dk / 2;
  if (dk % 2 != 0) throw Error("rope needs an even head dimension, got " + std::to_string(dk));
  Tensor out = Tensor::empty({B, H, T, dk});  // (B,h,T,dk)
  float* po = out.f32();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < dk; ++c) {
          const float angle = static_cast<float>(position0 + t) * rope_inv_freq(c % half, dk, theta, scaling);  // cat(freqs, freqs)
          const float rotated = c < half ? -get4(x, b, h, t, c + half) : get4(x, b, h, t, c - half);  // rotate_half
          *po++ = get4(x, b, h, t, c) * std::cos(angle) + rotated * std::sin(angle);
        }
  return out;
}

}  // namespace attnsim::reference
