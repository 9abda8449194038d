// The oracle and the comparison: the attention core in plain loops (float64 and float32;
// the float32 one uses the standard path's vector exp, so it is the standard path's math),
// and the FlashAttention tests' rule  max|flash - std32| <= 2·max|std32 - ref64| + floor.
#include <cfloat>
#include <cmath>
#include <limits>
#include <type_traits>

#include "error.h"
#include "flash.h"
#include "forward_steps.h"
#include "parallel.h"
#include "vector_exp.h"

namespace attnsim {

namespace {

void check_heads(const Tensor& q, const Tensor& k, const Tensor& v) {
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || k.shape() != v.shape() || q.size(0) != k.size(0) ||
      q.size(1) != k.size(1) || q.size(3) != k.size(3))
    throw Error("attention core: q " + format_dims(q.shape()) + ", k " + format_dims(k.shape()) + ", v " +
                format_dims(v.shape()) + " do not fit");
}

// The core in plain loops, with T the accumulator type: per row, scores, max, exp, sum,
// then Σ p·v / sum. Fully hidden rows are NaN (0/0), as in the standard path.
template <class T>
std::vector<T> core_loops(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMask& mask, T scale) {
  check_heads(q, k, v);
  const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), dk = q.size(3), Tk = k.size(2);
  // the same checks the tiled core makes (lengths per batch element, dense shape)
  (void)flash_io_tiled(FlashShape{B, H, Tq, Tk, dk, Tq, Tk}, mask);
  std::vector<T> out(static_cast<size_t>(B * H * Tq * dk));
  const Dims &qs = q.strides(), &ks = k.strides(), &vs = v.strides();
  // One row at a time; rows are independent, so workers take rows from a shared counter.
  auto row = [&](int64_t b, int64_t h, int64_t i, std::vector<T>& s, std::vector<char>& hid) {
    const float* qi = q.f32() + b * qs[0] + h * qs[1] + i * qs[2];
    T mx = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < Tk; ++j) {  // pass 1: scores, scaled, masked; the row max
      hid[j] = mask.hidden(b, h, i, j, Tq, Tk);
      const float* kj = k.f32() + b * ks[0] + h * ks[1] + j * ks[2];
      T dot = 0;
      for (int64_t c = 0; c < dk; ++c) dot += T(qi[c * qs[3]]) * T(kj[c * ks[3]]);
      s[j] = hid[j] ? -std::numeric_limits<T>::infinity() : dot * scale;
      mx = std::max(mx, s[j]);
    }
    T sum = 0;
    if constexpr (std::is_same_v<T, float>) {  // pass 2: exp and sum, with the standard path's exp
      if (mx != -std::numeric_limits<T>::infinity()) sum = exp_shifted_sum(s.data(), mx, s.data(), Tk);
      else std::fill(s.begin(), s.end(), T(0));
    } else {
      for (int64_t j = 0; j < Tk; ++j) {
        s[j] = hid[j] ? T(0) : std::exp(s[j] - mx);
        sum += s[j];
      }
    }
    for (int64_t j = 0; j < Tk; ++j) s[j] /= sum;  // alpha (NaN when sum = 0)
    T* o = out.data() + ((b * H + h) * Tq + i) * dk;
    for (int64_t c = 0; c < dk; ++c) o[c] = 0;
    for (int64_t j = 0; j < Tk; ++j) {  // pass 3: alpha·v
      const float* vj = v.f32() + b * vs[0] + h * vs[1] + j * vs[2];
      for (int64_t c = 0; c < dk; ++c) o[c] += s[j] * T(vj[c * vs[3]]);
    }
  };
  const int64_t rows = B * H * Tq;
  // Small problems in one chunk (one thread); large ones in chunks of about 2^20 multiply-adds.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(Tk * dk, 1));
  parallel_for(rows, grain, [&](int64_t first, int64_t last) {
    std::vector<T> s(static_cast<size_t>(Tk));
    std::vector<char> hid(static_cast<size_t>(Tk));
    for (int64_t r = first; r < last; ++r) row(r / (H * Tq), (r / Tq) % H, r % Tq, s, hid);
  });
  return out;
}

}  // namespace

std::vector<double> attention_core_f64(const Tensor& q, const Tensor& k, const Tensor& v,
                                       const FlashMask& mask, double scale) {
  return core_loops<double>(q, k, v, mask, scale);
}

Tensor attention_core_f32(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMask& mask,
                          float scale) {
  const std::vector<float> values = core_loops<float>(q, k, v, mask, scale);
  return Tensor::from_values({q.size(0), q.size(1), q.size(2), q.size(3)}, values);
}

FlashCompareFigures compare_with_reference(const Tensor& flash, const Tensor& std32,
                                           const std::vector<double>& ref64) {
  if (flash.shape() != std32.shape() || static_cast<int64_t>(ref64.size()) != flash.numel())
    throw Error("compare: flash " + format_dims(flash.shape()) + " and standard " + format_dims(std32.shape()) +
                " (reference of " + std::to_string(ref64.size()) + " values) do not match");
  const std::vector<float> f = flash.to_vector(), s = std32.to_vector();
  FlashCompareFigures r;
  double ref_max = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const bool fn = std::isnan(f[i]), sn = std::isnan(s[i]);
    if (fn || sn) {
      if (fn && sn) ++r.nan_count;
      else ++r.nan_mismatches;
      continue;
    }
    r.max_abs_diff = std::max(r.max_abs_diff, std::fabs(double(f[i]) - double(s[i])));
    if (std::isnan(ref64[i])) continue;
    r.std_error = std::max(r.std_error, std::fabs(double(s[i]) - ref64[i]));
    r.flash_error = std::max(r.flash_error, std::fabs(double(f[i]) - ref64[i]));
    ref_max = std::max(ref_max, std::fabs(ref64[i]));
  }
  r.floor = 0.5 * FLT_EPSILON * ref_max;  // unit roundoff at the largest output magnitude
  r.tolerance = 2 * r.std_error + r.floor;
  return r;
}

FlashComparison compare_flash_with_standard(const MhaConfig& c, const MhaWeights& w, const MhaInputs& in,
                                            const FlashResult& flash, Backend& backend) {
  const ForwardResult standard = forward(c, w, in, backend);
  FlashComparison r;
  r.standard_bytes = standard.trace.held_bytes();
  const Trace& st = standard.trace;
  const FlashMask mask = FlashMask::from_spec(c.mask, in.mask_file);
  const double scale = c.bug == Bug::NoScale ? 1.0 : 1.0 / std::sqrt(double(c.head_dim()));
  // ref64 from the standard path's own float32 heads (the same numbers the tiled path read).
  const std::vector<double> ref_ctx = attention_core_f64(core_q(st), core_k(st),
                                                         st.at("v_heads").out, mask, scale);
  r.ctx_heads = compare_with_reference(flash.trace.at("ctx_heads").out, st.at("ctx_heads").out, ref_ctx);

  // out = concat(ctx)·W_Oᵀ + b in float64                 (B,Tq,d)
  const int64_t B = c.batch, Tq = c.tq, H = c.heads, dk = c.head_dim(), d = c.d_model;
  std::vector<double> concat(static_cast<size_t>(B * Tq * d));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Tq; ++i)
        for (int64_t x = 0; x < dk; ++x)
          concat[(b * Tq + i) * d + h * dk + x] = ref_ctx[((b * H + h) * Tq + i) * dk + x];
  std::vector<double> ref_out = concat;
  if (!c.wo_identity) {
    const Tensor W = w.W_O.weight.contiguous();
    const Tensor bias = w.W_O.bias.defined() ? w.W_O.bias.contiguous() : Tensor();
    for (int64_t row = 0; row < B * Tq; ++row)
      for (int64_t o = 0; o < d; ++o) {
        double acc = bias.defined() ? double(bias.f32()[o]) : 0.0;
        for (int64_t x = 0; x < d; ++x) acc += concat[row * d + x] * double(W.f32()[o * d + x]);
        ref_out[row * d + o] = acc;
      }
  }
  r.out = compare_with_reference(flash.trace.at("out").out, st.at("out").out, ref_out);
  return r;
}

}  // namespace attnsim
