// The CPU backend: matrix products through sgemm (gemm.h), the softmax side as one tight pass per
// row. Every op here has a plain-loop twin in reference.cpp that the tests compare against.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "backend.h"
#include "blas_kernels.h"
#include "error.h"
#include "gemm.h"
#include "gemm_floor.h"
#include "gemm_fixed.h"
#include "packed_weights.h"
#include "parallel.h"
#include "random.h"
#include "reference.h"
#include "vector_exp.h"

namespace attnsim {

namespace {

// BLAS reads a matrix through a leading dimension: rows may be apart, elements in a row
// must be adjacent. Transposed views of (B,T,h,dk) keep that, so they pass through as is.
Tensor unit_inner_stride(const Tensor& t) {
  return t.strides().back() == 1 ? t : t.contiguous();  // copies only for odd views
}

class CpuBackend final : public Backend {
 public:
  // The first use picks the BLAS kernels, before any matrix product (blas_kernels.h).
  CpuBackend() { (void)blas_kernels(); }
  std::string name() const override { return "cpu"; }
  using Backend::linear;

  // y (B,T,out) = x (B,T,in) · Wᵀ + b: one sgemm over all B·T rows. A weight that is the
  // transpose view of a row-major (in, out) matrix (GPT-2's Conv1D layout, strides (1, ld))
  // is read in place as y = x · B, with no copy.
  Tensor linear(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias) override {
    const Tensor x = x_in.contiguous();
    const bool in_out = weight_in.dim() == 2 && weight_in.size(0) > 1 && weight_in.strides()[0] == 1 &&
                        weight_in.strides()[1] >= weight_in.size(0);
    const Tensor w = in_out ? weight_in : weight_in.contiguous();
    const int64_t in = x.size(-1), out_dim = w.size(0), rows = x.numel() / in;
    Dims shape = x.shape();
    shape.back() = out_dim;
    Tensor y = Tensor::empty(shape);  // (B,T,out)
    float* py = y.f32();
    if (bias.defined()) {  // preload every row with the bias, then accumulate (beta = 1)
      const Tensor b = bias.contiguous();
      for (int64_t r = 0; r < rows; ++r) std::memcpy(py + r * out_dim, b.f32(), out_dim * sizeof(float));
    }
    const int64_t ldb = in_out ? w.strides()[1] : in;
    GemmLog::note({rows, out_dim, in, in, ldb, out_dim, !in_out});
    sgemm(Op::N, in_out ? Op::N : Op::T, rows, out_dim, in, 1.0f, x.f32(), in, w.f32(), ldb,
          bias.defined() ? 1.0f : 0.0f, py, out_dim);
    return y;
  }

  // y (B,T,out) = x (B,T,in) · Wᵀ + b on the weight packed once (packed_weights.h), unless a
  // FixedOrderProducts guard is alive (training: the fixed-order sgemm, bit for bit) or the
  // Linear has no packed form: then the sgemm above.
  Tensor linear(const Tensor& x_in, const Linear& l) override {
    if (!l.packed || fixed_order_products()) return Backend::linear(x_in, l);
    const PackedWeight& w = *l.packed;
    if (x_in.size(-1) != w.in() || (l.bias.defined() && l.bias.numel() != w.out()))
      throw Error("linear: input " + format_dims(x_in.shape()) + " against a packed weight (" + std::to_string(w.out()) +
                  ", " + std::to_string(w.in()) + ")" + (l.bias.defined() ? " and bias " + format_dims(l.bias.shape()) : ""));
    const Tensor x = x_in.contiguous();  // copies only for odd views
    const Tensor b = l.bias.defined() ? l.bias.contiguous() : Tensor();
    const int64_t rows = x.numel() / w.in();
    Dims shape = x.shape();
    shape.back() = w.out();
    Tensor y = Tensor::empty(shape);  // (B,T,out)
    GemmLog::note({rows, w.out(), w.in(), w.in(), w.in(), w.out(), true});
    if (rows > 0) w.linear(x.f32(), rows, b.defined() ? b.f32() : nullptr, y.f32());
    return y;
  }

  // scores (B,h,Tq,Tk) = q (B,h,Tq,dk) · k (B,h,Tk,dk)ᵀ
  Tensor qk(const Tensor& q, const Tensor& k) override { return batched_matmul(q, k, Op::T); }

  // One pass per row of Tk: scaled, masked, then max / exp / sum / divide while the row is
  // in L1. Bug modes that change the axis or the precision use the reference loops.
  SoftmaxSteps scale_mask_softmax(const Tensor& scores_in, const SoftmaxSpec& spec) override {
    if (spec.axis != -1 || spec.fp16_no_max) return reference::scale_mask_softmax(scores_in, spec);
    const Tensor scores = scores_in.contiguous();
    const int64_t B = scores.size(0), H = scores.size(1), Tq = scores.size(2), Tk = scores.size(3);
    SoftmaxSteps out;
    out.scaled = Tensor::empty(scores.shape());
    out.alpha = Tensor::empty(scores.shape());
    if (spec.mask.defined()) out.masked = Tensor::empty(scores.shape());
    const float* src = scores.f32();
    std::mutex mutex;
    parallel_for(B * H * Tq, 256, [&](int64_t first, int64_t last) {
      NonFinite scaled, masked, alpha;
      for (int64_t r = first; r < last; ++r) {
        softmax_side_row(src, out, spec, r, H, Tq, Tk);
        count_nonfinite_into(out.scaled.f32() + r * Tk, Tk, scaled);
        if (out.masked.defined()) count_nonfinite_into(out.masked.f32() + r * Tk, Tk, masked);
        count_nonfinite_into(out.alpha.f32() + r * Tk, Tk, alpha);
      }
      std::lock_guard<std::mutex> lock(mutex);
      add_counts(out, scaled, masked, alpha);
    });
    out.counted = true;
    return out;
  }

  Tensor dropout(const Tensor& alpha_in, float p, uint64_t seed) override {
    const Tensor alpha = alpha_in.contiguous();
    Tensor out = Tensor::empty(alpha.shape());
    const float keep_scale = 1.0f / (1.0f - p);
    const float* a = alpha.f32();
    float* o = out.f32();
    // Each element's keep draw depends only on (seed, index), so chunks run in any order.
    parallel_for(alpha.numel(), int64_t{1} << 16, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i)
        o[i] = dropout_keeps(seed, static_cast<uint64_t>(i), p) ? a[i] * keep_scale : 0.0f;
    });
    return out;
  }

  // ctx (B,h,Tq,dk) = alpha (B,h,Tq,Tk) · v (B,h,Tk,dk)
  Tensor av(const Tensor& alpha, const Tensor& v) override { return batched_matmul(alpha, v, Op::N); }

  Tensor contiguous(const Tensor& x) override { return x.contiguous(); }  // copies

  // The four ops of the core per (batch, head), on the engine's threads: q·kᵀ into that
  // head's (Tq,Tk) block of scores, its rows through the softmax side and dropout while they
  // are in cache, then alpha·v. Same calls, same order within a row, same tensors as qk,
  // scale_mask_softmax, dropout and av one after the other (the tests compare both).
  AttentionCore attention_core(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const SoftmaxSpec& spec,
                               float dropout_p, uint64_t seed) override {
    // grouped K/V (GQA) and the bug modes: the four ops one after the other
    if (spec.axis != -1 || spec.fp16_no_max || k_in.dim() == 5)
      return Backend::attention_core(q_in, k_in, v_in, spec, dropout_p, seed);
    const Tensor q = unit_inner_stride(q_in), k = unit_inner_stride(k_in), v = unit_inner_stride(v_in);
    const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), dk = q.size(3), Tk = k.size(2);
    const Dims score_shape{B, H, Tq, Tk};
    AttentionCore out;
    SoftmaxSteps& sm = out.softmax;
    out.scores = Tensor::empty(score_shape);
    sm.scaled = Tensor::empty(score_shape);
    if (spec.mask.defined()) sm.masked = Tensor::empty(score_shape);
    sm.alpha = Tensor::empty(score_shape);
    if (dropout_p > 0) out.dropped = Tensor::empty(score_shape);
    out.ctx = Tensor::empty({B, H, Tq, dk});
    const Dims &qs = q.strides(), &ks = k.strides(), &vs = v.strides();
    for (int64_t i = 0; i < B * H; ++i) GemmLog::note({Tq, Tk, dk, qs[2], ks[2], Tk, true});
    for (int64_t i = 0; i < B * H; ++i) GemmLog::note({Tq, dk, Tk, Tk, vs[2], dk, false});
    const float keep_scale = 1.0f / (1.0f - dropout_p);
    const int64_t block = Tq * Tk;  // one head's scores
    std::mutex mutex;
    const BlasOnCallingThread one;
    parallel_for(B * H, 1, [&](int64_t first, int64_t last) {
      NonFinite scaled, masked, alpha;
      for (int64_t item = first; item < last; ++item) {
        const int64_t b = item / H, h = item % H;
        sgemm(Op::N, Op::T, Tq, Tk, dk, 1.0f, q.f32() + b * qs[0] + h * qs[1], qs[2],
                    k.f32() + b * ks[0] + h * ks[1], ks[2], 0.0f, out.scores.f32() + item * block, Tk);
        for (int64_t r = item * Tq; r < (item + 1) * Tq; ++r) {
          softmax_side_row(out.scores.f32(), sm, spec, r, H, Tq, Tk);
          count_nonfinite_into(sm.scaled.f32() + r * Tk, Tk, scaled);
          if (sm.masked.defined()) count_nonfinite_into(sm.masked.f32() + r * Tk, Tk, masked);
          count_nonfinite_into(sm.alpha.f32() + r * Tk, Tk, alpha);
        }
        const float* weights = sm.alpha.f32() + item * block;
        if (dropout_p > 0) {  // the draw depends on the element's index in the whole tensor, as in dropout()
          float* o = out.dropped.f32() + item * block;
          for (int64_t j = 0; j < block; ++j)
            o[j] = dropout_keeps(seed, static_cast<uint64_t>(item * block + j), dropout_p) ? weights[j] * keep_scale
                                                                                            : 0.0f;
          weights = o;
        }
        sgemm(Op::N, Op::N, Tq, dk, Tk, 1.0f, weights, Tk,
                    v.f32() + b * vs[0] + h * vs[1], vs[2], 0.0f, out.ctx.f32() + item * Tq * dk, dk);
      }
      std::lock_guard<std::mutex> lock(mutex);
      add_counts(sm, scaled, masked, alpha);
    });
    sm.counted = true;
    return out;
  }

  // scores (B,h,Tq,Tk) = q (B,h,Tq,dk) · k (B,g,r,Tk,dk)ᵀ, k read in place (stride 0 on r)
  Tensor qk_grouped(const Tensor& q, const Tensor& k) override { return grouped_matmul(q, k, Op::T); }
  // ctx (B,h,Tq,dk) = alpha (B,h,Tq,Tk) · v (B,g,r,Tk,dk)
  Tensor av_grouped(const Tensor& alpha, const Tensor& v) override { return grouped_matmul(alpha, v, Op::N); }

 private:
  // c[b,h] = a[b,h] · op(b[b,h]) for 4-D operands, one sgemm per (b, h), each matrix read in
  // place through its row stride (the leading dimension). The (b, h) products are spread
  // over the engine's threads, each run by OpenBLAS on its own thread (BlasOnCallingThread).
  //                                                                  c: (B,h,M,N) new storage
  static Tensor batched_matmul(const Tensor& a_in, const Tensor& b_in, Op op_b) {
    const Tensor a = unit_inner_stride(a_in), b = unit_inner_stride(b_in);
    const int64_t B = a.size(0), H = a.size(1), M = a.size(2), K = a.size(3);
    const int64_t N = op_b == Op::T ? b.size(2) : b.size(3);
    Tensor c = Tensor::empty({B, H, M, N});
    const Dims& as = a.strides();
    const Dims& bs = b.strides();
    for (int64_t i = 0; i < B * H; ++i) GemmLog::note({M, N, K, as[2], bs[2], N, op_b == Op::T});
    const float *pa = a.f32(), *pb = b.f32();
    float* pc = c.f32();
    const BlasOnCallingThread one;
    parallel_for(B * H, 1, [&](int64_t first, int64_t last) {
      for (int64_t item = first; item < last; ++item) {
        const int64_t i = item / H, h = item % H;
        sgemm(Op::N, op_b, M, N, K, 1.0f, pa + i * as[0] + h * as[1], as[2],
                    pb + i * bs[0] + h * bs[1], bs[2], 0.0f, pc + item * M * N, N);
      }
    });
    return c;
  }

  // One thread's NaN / inf counts added to the totals (under the caller's lock).
  static void add_counts(SoftmaxSteps& out, const NonFinite& scaled, const NonFinite& masked, const NonFinite& alpha) {
    for (auto [sum, part] : {std::pair{&out.scaled_counts, &scaled}, {&out.masked_counts, &masked},
                             {&out.alpha_counts, &alpha}}) {
      sum->nan += part->nan;
      sum->neginf += part->neginf;
      sum->posinf += part->posinf;
    }
  }

  // c[b,i] = a[b,i] · op(b5[b, i/r, i%r]) with b5 (B,g,r,K|N,..) a stride-0 group view.
  // With one query row (decode) the r heads of a group are r rows of one matrix, so each
  // K/V head is read once per group by one sgemm: the point of GQA.     c: (B,h,M,N) new storage
  static Tensor grouped_matmul(const Tensor& a_in, const Tensor& b_in, Op op_b) {
    const Tensor a = unit_inner_stride(a_in);
    const Tensor b = b_in.strides().back() == 1 ? b_in : b_in.contiguous();
    const int64_t B = a.size(0), H = a.size(1), M = a.size(2), K = a.size(3);
    const int64_t G = b.size(1), r = b.size(2), N = op_b == Op::T ? b.size(3) : b.size(4);
    if (G * r != H) throw Error("grouped matmul: " + format_dims(a.shape()) + " against " + format_dims(b.shape()));
    Tensor c = Tensor::empty({B, H, M, N});
    const Dims& as = a.strides();
    const Dims& bs = b.strides();
    for (int64_t i = 0; i < B; ++i) {
      if (M == 1) {
        for (int64_t j = 0; j < G; ++j)
          sgemm(Op::N, op_b, r, N, K, 1.0f, a.f32() + i * as[0] + j * r * as[1], as[1],
                      b.f32() + i * bs[0] + j * bs[1], bs[3], 0.0f, c.f32() + (i * H + j * r) * N, N);
        continue;
      }
      for (int64_t h = 0; h < H; ++h)
        sgemm(Op::N, op_b, M, N, K, 1.0f, a.f32() + i * as[0] + h * as[1], as[2],
                    b.f32() + i * bs[0] + (h / r) * bs[1] + (h % r) * bs[2], bs[3], 0.0f,
                    c.f32() + (i * H + h) * M * N, N);
    }
    return c;
  }

  // Row r of (B·h·Tq): scaled, then masked, then alpha, while the row is in L1.
  static void softmax_side_row(const float* src, SoftmaxSteps& out, const SoftmaxSpec& spec, int64_t r,
                               int64_t H, int64_t Tq, int64_t Tk) {
    const int64_t b = r / (H * Tq), h = r / Tq % H, i = r % Tq, row = r * Tk;
    float* scaled = out.scaled.f32() + row;
    for (int64_t j = 0; j < Tk; ++j) scaled[j] = src[row + j] * spec.scale;
    const float* logits = scaled;
    int64_t live = Tk;
    if (out.masked.defined()) {
      float* m = out.masked.f32() + row;
      apply_mask_row(spec.mask, b, h, i, scaled, m, Tk, spec);
      if (spec.mask2.defined()) apply_mask_row(spec.mask2, b, h, i, m, m, Tk, spec);
      logits = m;
      live = live_columns(spec, b, h, i, Tk);
    }
    softmax_row(logits, out.alpha.f32() + row, Tk, live);
  }

  // The columns of row (b, h, i) that the softmax must exponentiate: all but a hidden tail
  // (a causal mask's future keys, right padding) filled with -inf, whose exp is exactly 0.
  // Rounded up to kExpLanes so that the kept columns are summed in the same lanes, in the
  // same order, as the whole row: alpha comes out bit for bit the same. The bug modes
  // (finite fill, additive, two fills), a fully hidden row (NaN, as in PyTorch) and
  // training's fixed-order exp keep the whole row.
  static int64_t live_columns(const SoftmaxSpec& spec, int64_t b, int64_t h, int64_t i, int64_t Tk) {
    if (spec.additive || spec.mask2.defined() || spec.fill != -INFINITY || fixed_order_products()) return Tk;
    const Dims& ms = spec.mask.strides();
    const uint8_t* m = spec.mask.b8() + b * ms[0] + h * ms[1] + i * ms[2];
    int64_t n = Tk;
    while (n > 0 && m[(n - 1) * ms[3]]) --n;
    if (n == 0) return Tk;
    return std::min(Tk, (n + kExpLanes - 1) / kExpLanes * kExpLanes);
  }

  // dst[j] = hidden ? fill : src[j]   (or src[j] + 1 for the additive bug)
  static void apply_mask_row(const Tensor& mask, int64_t b, int64_t h, int64_t i, const float* src,
                             float* dst, int64_t Tk, const SoftmaxSpec& spec) {
    const Dims& ms = mask.strides();
    const uint8_t* m = mask.b8() + b * ms[0] + h * ms[1] + i * ms[2];
    const int64_t step = ms[3];
    const float fill = spec.fill;  // a local: dst might alias spec, which would reload it per element
    if (spec.additive) {
      for (int64_t j = 0; j < Tk; ++j) dst[j] = src[j] + (m[j * step] ? 1.0f : 0.0f);
    } else if (step == 1) {  // a row of a (.., Tq, Tk) mask: vectorises
      for (int64_t j = 0; j < Tk; ++j) dst[j] = m[j] ? fill : src[j];
    } else {
      for (int64_t j = 0; j < Tk; ++j) dst[j] = m[j * step] ? fill : src[j];
    }
  }

  // max over the row in lanes, then across them: `x > mx ? x : mx` skips NaN either way, and
  // the only order effect (max(+0, −0)) cannot change exp(x − max).
  static float row_max(const float* x, int64_t n) {
    using fixed::F8, fixed::F8U;
    F8 lanes = F8{} - INFINITY;
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
      const F8 v = *reinterpret_cast<const F8U*>(x + j);
      lanes = v > lanes ? v : lanes;
    }
    float mx = -INFINITY;
    for (int l = 0; l < 8; ++l) mx = lanes[l] > mx ? lanes[l] : mx;
    for (; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
    return mx;
  }

  // IEEE semantics on purpose: a row of -inf has max -inf, and -inf - -inf is NaN, as in
  // PyTorch, so a fully hidden row comes out NaN and the trace can follow it downstream.
  // Columns from `live` on are -inf (live_columns): exp gives 0 there, so they are written
  // as 0 · inv, which is also NaN when the row's sum is, as the whole row would give.
  static void softmax_row(const float* x, float* y, int64_t n, int64_t live) {
    const float mx = row_max(x, live);  // a NaN in x stays NaN below
    const float inv = 1.0f / exp_shifted_sum(x, mx, y, live);
    for (int64_t j = 0; j < live; ++j) y[j] *= inv;
    const float hidden = 0.0f * inv;
    for (int64_t j = live; j < n; ++j) y[j] = hidden;
  }
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend backend;
  return backend;
}

}  // namespace attnsim
