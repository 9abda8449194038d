#include "model/pass/layers.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/fixed_math.h"
#include "engine/blas_kernels.h"
#include "engine/gemm.h"
#include "engine/parallel.h"
#include "engine/rope.h"

namespace attnsim::model {

// [SECTION] linear

void linear_backward(const float* dy, const float* x, const float* W, int64_t N, int64_t in, int64_t out,
                     float* dx, float* dW, float* db) {
  const int n = static_cast<int>(N), i = static_cast<int>(in), o = static_cast<int>(out);
  if (dx)  // dx (N,in) = dy (N,out) · W (out,in)
    sgemm(Op::N, Op::N, n, i, o, 1.0f, dy, o, W, i, 0.0f, dx, i);
  // dW (out,in) += dyᵀ (out,N) · x (N,in)
  sgemm(Op::T, Op::N, o, i, n, 1.0f, dy, o, x, i, 1.0f, dW, i);
  if (db)
    for (int64_t r = 0; r < N; ++r)
      for (int64_t c = 0; c < out; ++c) db[c] += dy[r * out + c];
}

// [SECTION] layernorm

void layernorm_forward(const float* x, const float* w, const float* b, int64_t N, int64_t d, float* y,
                       float* mean, float* rstd, double eps) {
  for (int64_t r = 0; r < N; ++r) {
    const float* xr = x + r * d;
    double m = 0, v = 0;
    for (int64_t i = 0; i < d; ++i) m += xr[i];
    m /= static_cast<double>(d);
    for (int64_t i = 0; i < d; ++i) v += (xr[i] - m) * (xr[i] - m);
    v /= static_cast<double>(d);  // biased variance, as torch
    const float s = static_cast<float>(1.0 / std::sqrt(v + eps));
    for (int64_t i = 0; i < d; ++i) y[r * d + i] = (xr[i] - static_cast<float>(m)) * s * w[i] + b[i];
    mean[r] = static_cast<float>(m);
    rstd[r] = s;
  }
}

void layernorm_backward(const float* dy, const float* x, const float* w, const float* mean, const float* rstd,
                        int64_t N, int64_t d, float* dx, float* dw, float* db) {
  for (int64_t r = 0; r < N; ++r) {
    const float* xr = x + r * d;
    const float* gr = dy + r * d;
    // xhat = (x - mean)·rstd; dxhat = dy·w;  dx = rstd·(dxhat − mean(dxhat) − xhat·mean(dxhat·xhat))
    float sum_g = 0, sum_gx = 0;
    for (int64_t i = 0; i < d; ++i) {
      const float xhat = (xr[i] - mean[r]) * rstd[r];
      const float g = gr[i] * w[i];
      sum_g += g;
      sum_gx += g * xhat;
      dw[i] += gr[i] * xhat;
      db[i] += gr[i];
    }
    const float mg = sum_g / static_cast<float>(d), mgx = sum_gx / static_cast<float>(d);
    for (int64_t i = 0; i < d; ++i) {
      const float xhat = (xr[i] - mean[r]) * rstd[r];
      dx[r * d + i] = rstd[r] * (gr[i] * w[i] - mg - xhat * mgx);
    }
  }
}

// [SECTION] rmsnorm

void rmsnorm_backward(const float* dy, const float* x, const float* w, const float* rstd, int64_t N, int64_t d,
                      float* dx, float* dw) {
  for (int64_t r = 0; r < N; ++r) {
    const float* xr = x + r * d;
    const float* gr = dy + r * d;
    float sum_gx = 0;  // Σ dy⊙w⊙x
    for (int64_t i = 0; i < d; ++i) {
      sum_gx += gr[i] * w[i] * xr[i];
      dw[i] += gr[i] * xr[i] * rstd[r];
    }
    const float k = rstd[r] * rstd[r] * sum_gx / static_cast<float>(d);
    for (int64_t i = 0; i < d; ++i) dx[r * d + i] = rstd[r] * (gr[i] * w[i] - xr[i] * k);
  }
}

// [SECTION] swiglu

void swiglu_backward(const float* da, const float* g, const float* u, int64_t n, float* dg, float* du) {
  // σ(g) = 1 / (1 + e^-g) by fixed_math's exp (the same bits on every CPU), its argument
  // clamped to ±80 as the forward's (pass_ops.cpp): σ is then exactly 0 or 1 in float32
  std::vector<float> e(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) e[i] = std::min(80.0f, std::max(-80.0f, -g[i]));
  (void)fixed::exp_shifted_sum(e.data(), 0.0f, e.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const float sig = 1.0f / (1.0f + e[i]), a = da[i];
    du[i] = a * g[i] * sig;
    dg[i] = a * u[i] * sig * (1.0f + g[i] * (1.0f - sig));
  }
}

// [SECTION] gelu

void gelu_forward(const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
}

void gelu_backward(const float* dy, const float* x, int64_t n, float* dx) {
  // exp(-x²/2) by fixed_math's exp (the same bits on every CPU); dx may be dy itself
  std::vector<float> e(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) e[i] = -0.5f * x[i] * x[i];
  (void)fixed::exp_shifted_sum(e.data(), 0.0f, e.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const float cdf = 0.5f * (1.0f + std::erf(x[i] * 0.70710678118654752f));
    const float pdf = 0.3989422804014327f * e[i];
    dx[i] = dy[i] * (cdf + x[i] * pdf);
  }
}

// [SECTION] embedding

void embedding_backward(const float* dx0, const int32_t* tokens, int64_t B, int64_t T, int64_t d,
                        float* d_embed, float* d_pos) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const float* g = dx0 + (b * T + t) * d;
      float* e = d_embed + static_cast<int64_t>(tokens[b * T + t]) * d;
      for (int64_t i = 0; i < d; ++i) {
        e[i] += g[i];
        if (d_pos) d_pos[t * d + i] += g[i];
      }
    }
}

// [SECTION] attention

namespace {

// RoPE's transpose over a gradient g (B,T,width) whose rows hold heads of dk side by side:
// the forward turned pair (i, i + dk/2) of row t by +angle[t][i]; this turns it by −angle.
void rope_turn_back(float* g, int64_t B, int64_t T, int64_t width, int64_t dk, double theta) {
  const RopeTable r = rope_table(T, dk, 0, theta);
  for (int64_t row = 0; row < B * T; ++row) {
    const float* c = r.cos.data() + (row % T) * r.half;
    const float* s = r.sin.data() + (row % T) * r.half;
    for (int64_t head = 0; head < width / dk; ++head) {
      float* v = g + row * width + head * dk;
      for (int64_t i = 0; i < r.half; ++i) {
        const float y1 = v[i], y2 = v[i + r.half];
        v[i] = y1 * c[i] + y2 * s[i];
        v[i + r.half] = y2 * c[i] - y1 * s[i];
      }
    }
  }
}

}  // namespace

void attention_backward(const Trace& trace, const MhaWeights& w, int64_t heads, double rope_theta,
                        const std::vector<int64_t>& ablated, const float* dout, const AttnGrads& g, float* dx) {
  const Tensor& x = trace.at("query").out;            // (B,T,d)
  const Tensor& alpha = trace.at("alpha").out;        // (B,h,T,T) contiguous
  const Tensor& ctx = trace.at("ctx_concat").out;     // (B,T,d)
  const Tensor& q_proj = trace.at("q_proj").out;      // (B,T,d): q_heads is its (B,h,T,dk) view
  const Tensor& k_proj = trace.at("k_proj").out;      // (B,T,g·dk): k_heads is its (B,g,T,dk) view
  const Tensor& v_proj = trace.at("v_proj").out;
  const int64_t B = x.size(0), T = x.size(1), d = x.size(2), h = heads, dk = d / h;
  const int64_t N = B * T, kv = k_proj.size(2), r = h / (kv / dk);  // r query heads per K/V head
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  // the q and k the scores read: q_proj's and k_proj's heads, or under RoPE the turned copies
  // q_rot (B,h,T,dk) and k_rot (B,g,T,dk), contiguous
  const bool rope = rope_theta > 0;
  const float* q_src = rope ? trace.at("q_rot").out.f32() : q_proj.f32();
  const float* k_src = rope ? trace.at("k_rot").out.f32() : k_proj.f32();

  // W_O: dctx (B,T,d) = dout · W_O, dW_O += doutᵀ · ctx
  Tensor dctx = Tensor::empty({N * d});
  linear_backward(dout, ctx.f32(), w.W_O.weight.f32(), N, d, d, dctx.f32(), g.dWo, g.dbo);
  for (int64_t head : ablated)  // the ablated head's ctx was a constant
    for (int64_t row = 0; row < N; ++row)
      for (int64_t e = 0; e < dk; ++e) dctx.f32()[row * d + head * dk + e] = 0.0f;

  // per (b, K/V head): the heads are (T,dk) slices of the (B,T,d) and (B,T,g·dk) buffers.
  // Query heads hh of one K/V head (hh / r) all add into its dk and dv (beta = 1 into zeroed
  // buffers), in order of hh on one thread, so the sums do not depend on the thread count;
  // different K/V heads write disjoint slices and run on the engine's threads.
  Tensor dq = Tensor::empty({N * d});
  Tensor dk_ = Tensor::zeros({N * kv});
  Tensor dv = Tensor::zeros({N * kv});
  const int t = static_cast<int>(T), D = static_cast<int>(d), KV = static_cast<int>(kv), K = static_cast<int>(dk);
  const int lq = rope ? K : D, lk = rope ? K : KV;
  const int64_t groups = h / r;
  const BlasOnCallingThread one;
  parallel_for(B * groups, 1, [&](int64_t first, int64_t last) {
    std::vector<float> dA(static_cast<size_t>(T * T));  // one head's dalpha, then dS   (T,T)
    for (int64_t item = first; item < last; ++item) {
      const int64_t b = item / groups, grp = item % groups;
      for (int64_t hh = grp * r; hh < (grp + 1) * r; ++hh) {
        const int64_t off = b * T * d + hh * dk, kv_off = b * T * kv + grp * dk;
        const float* A = alpha.f32() + (b * h + hh) * T * T;  // (T,T)
        const float* dC = dctx.f32() + off;                    // (T,dk), ld d
        const float* q = rope ? q_src + (b * h + hh) * T * dk : q_src + off;              // (T,dk), ld lq
        const float* k = rope ? k_src + (b * groups + grp) * T * dk : k_src + kv_off;    // (T,dk), ld lk
        const float* v = v_proj.f32() + kv_off;                                          // (T,dk), ld g·dk
        // dalpha (T,T) = dctx · vᵀ;  dv (T,dk) += alphaᵀ · dctx
        sgemm(Op::N, Op::T, t, t, K, 1.0f, dC, D, v, KV, 0.0f, dA.data(), t);
        sgemm(Op::T, Op::N, t, K, t, 1.0f, A, t, dC, D, 1.0f, dv.f32() + kv_off, KV);
        // softmax: dS = A ⊙ (dA − rowsum(dA ⊙ A)), times the scale; hidden keys have A = 0
        for (int64_t i = 0; i < T; ++i) {
          const float* a = A + i * T;
          float* row = dA.data() + i * T;
          float dot = 0;
          for (int64_t j = 0; j < T; ++j) dot += row[j] * a[j];
          for (int64_t j = 0; j < T; ++j) row[j] = a[j] * (row[j] - dot) * scale;
        }
        // dq (T,dk) = dS · k;  dk (T,dk) += dSᵀ · q
        sgemm(Op::N, Op::N, t, K, t, 1.0f, dA.data(), t, k, lk, 0.0f, dq.f32() + off, D);
        sgemm(Op::T, Op::N, t, K, t, 1.0f, dA.data(), t, q, lq, 1.0f, dk_.f32() + kv_off, KV);
      }
    }
  });
  if (rope) {  // dq, dk are the turned q's and k's gradients: back through RoPE's transpose
    rope_turn_back(dq.f32(), B, T, d, dk, rope_theta);
    rope_turn_back(dk_.f32(), B, T, kv, dk, rope_theta);
  }

  // the three projections read the same x: dx = dq·W_Q + dk·W_K + dv·W_V
  Tensor part = Tensor::empty({N * d});
  linear_backward(dq.f32(), x.f32(), w.W_Q.weight.f32(), N, d, d, dx, g.dWq, g.dbq);
  linear_backward(dk_.f32(), x.f32(), w.W_K.weight.f32(), N, d, kv, part.f32(), g.dWk, g.dbk);
  for (int64_t i = 0; i < N * d; ++i) dx[i] += part.f32()[i];
  linear_backward(dv.f32(), x.f32(), w.W_V.weight.f32(), N, d, kv, part.f32(), g.dWv, g.dbv);
  for (int64_t i = 0; i < N * d; ++i) dx[i] += part.f32()[i];
}

}  // namespace attnsim::model
