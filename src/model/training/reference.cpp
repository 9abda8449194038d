#include "model/training/reference.h"

#include <cmath>
#include <map>
#include <utility>
#include <string>

#include "engine/rope.h"

namespace attnsim::model {

namespace {

template <class S>
using Vec = std::vector<S>;

// y (N,out) = x (N,in) · Wᵀ + b
template <class S>
Vec<S> linear(const Vec<S>& x, const Vec<S>& W, const Vec<S>* b, int64_t N, int64_t in, int64_t out) {
  Vec<S> y(static_cast<size_t>(N * out));
  for (int64_t r = 0; r < N; ++r)
    for (int64_t o = 0; o < out; ++o) {
      S acc = b ? (*b)[o] : S(0);
      for (int64_t i = 0; i < in; ++i) acc += x[r * in + i] * W[o * in + i];
      y[r * out + o] = acc;
    }
  return y;
}

// returns dx; accumulates dW, db
template <class S>
Vec<S> linear_back(const Vec<S>& dy, const Vec<S>& x, const Vec<S>& W, Vec<S>& dW, Vec<S>* db, int64_t N, int64_t in,
                   int64_t out) {
  Vec<S> dx(static_cast<size_t>(N * in));
  for (int64_t r = 0; r < N; ++r)
    for (int64_t o = 0; o < out; ++o) {
      const S g = dy[r * out + o];
      if (db) (*db)[o] += g;
      for (int64_t i = 0; i < in; ++i) {
        dW[o * in + i] += g * x[r * in + i];
        dx[r * in + i] += g * W[o * in + i];
      }
    }
  return dx;
}

// mean and 1/sqrt(var + eps) of row r (biased variance, as torch.nn.LayerNorm)
template <class S>
std::pair<S, S> row_stats(const Vec<S>& x, int64_t r, int64_t d) {
  S mean = 0, var = 0;
  for (int64_t i = 0; i < d; ++i) mean += x[r * d + i];
  mean /= S(d);
  for (int64_t i = 0; i < d; ++i) var += (x[r * d + i] - mean) * (x[r * d + i] - mean);
  var /= S(d);
  return {mean, S(1) / std::sqrt(var + S(1e-5))};
}

template <class S>
Vec<S> layernorm(const Vec<S>& x, const Vec<S>& w, const Vec<S>& b, int64_t N, int64_t d) {
  Vec<S> y(x.size());
  for (int64_t r = 0; r < N; ++r) {
    const auto [mean, rstd] = row_stats(x, r, d);
    for (int64_t i = 0; i < d; ++i) y[r * d + i] = (x[r * d + i] - mean) * rstd * w[i] + b[i];
  }
  return y;
}

template <class S>
Vec<S> layernorm_back(const Vec<S>& dy, const Vec<S>& x, const Vec<S>& w, Vec<S>& dw, Vec<S>& db, int64_t N,
                      int64_t d) {
  Vec<S> dx(x.size());
  for (int64_t r = 0; r < N; ++r) {
    const auto [mean, rstd] = row_stats(x, r, d);
    S sum_g = 0, sum_gx = 0;
    for (int64_t i = 0; i < d; ++i) {
      const S xhat = (x[r * d + i] - mean) * rstd, g = dy[r * d + i] * w[i];
      dw[i] += dy[r * d + i] * xhat;
      db[i] += dy[r * d + i];
      sum_g += g;
      sum_gx += g * xhat;
    }
    for (int64_t i = 0; i < d; ++i) {
      const S xhat = (x[r * d + i] - mean) * rstd;
      dx[r * d + i] = rstd * (dy[r * d + i] * w[i] - sum_g / S(d) - xhat * sum_gx / S(d));
    }
  }
  return dx;
}

// RMSNorm: 1/sqrt(mean(x²) + eps) of row r
template <class S>
S rms_rstd(const Vec<S>& x, int64_t r, int64_t d) {
  S sq = 0;
  for (int64_t i = 0; i < d; ++i) sq += x[r * d + i] * x[r * d + i];
  return S(1) / std::sqrt(sq / S(d) + S(1e-5));
}

template <class S>
Vec<S> rmsnorm(const Vec<S>& x, const Vec<S>& w, int64_t N, int64_t d) {
  Vec<S> y(x.size());
  for (int64_t r = 0; r < N; ++r) {
    const S rstd = rms_rstd(x, r, d);
    for (int64_t i = 0; i < d; ++i) y[r * d + i] = x[r * d + i] * rstd * w[i];
  }
  return y;
}

template <class S>
Vec<S> rmsnorm_back(const Vec<S>& dy, const Vec<S>& x, const Vec<S>& w, Vec<S>& dw, int64_t N, int64_t d) {
  Vec<S> dx(x.size());
  for (int64_t r = 0; r < N; ++r) {
    const S rstd = rms_rstd(x, r, d);
    S sum_gx = 0;
    for (int64_t i = 0; i < d; ++i) {
      sum_gx += dy[r * d + i] * w[i] * x[r * d + i];
      dw[i] += dy[r * d + i] * x[r * d + i] * rstd;
    }
    for (int64_t i = 0; i < d; ++i)
      dx[r * d + i] = rstd * (dy[r * d + i] * w[i] - x[r * d + i] * rstd * rstd * sum_gx / S(d));
  }
  return dx;
}

// RoPE on v (N, width), heads of dk side by side, row n at position n % T: pair (i, i + dk/2)
// turned by sign·angle (sign −1: the transpose, for the backward). The angle is the engine's,
// position · inv_freq in float32 (rope.h), its cos and sin taken in S.
template <class S>
void rope_turn(Vec<S>& v, int64_t N, int64_t T, int64_t width, int64_t dk, double theta, S sign) {
  const int64_t half = dk / 2;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t head = 0; head < width / dk; ++head)
      for (int64_t i = 0; i < half; ++i) {
        const S angle = S(static_cast<float>(n % T) * rope_inv_freq(i, dk, theta));
        const S c = std::cos(angle), s = sign * std::sin(angle);
        S& x1 = v[n * width + head * dk + i];
        S& x2 = v[n * width + head * dk + i + half];
        const S a = x1, b = x2;
        x1 = a * c - b * s;
        x2 = b * c + a * s;
      }
}

template <class S>
S sigmoid(S x) {
  return S(1) / (S(1) + std::exp(-x));
}

template <class S>
S gelu(S x) {
  return S(0.5) * x * (S(1) + std::erf(x / std::sqrt(S(2))));
}
template <class S>
S gelu_grad(S x) {
  return S(0.5) * (S(1) + std::erf(x / std::sqrt(S(2)))) + x * std::exp(-x * x / S(2)) / std::sqrt(S(2) * S(M_PI));
}

template <class S>
Vec<S> add(const Vec<S>& a, const Vec<S>& b) {
  Vec<S> c(a.size());
  for (size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
  return c;
}

// Causal softmax attention of one layer on a_in (N,d): returns ctx (N,d), keeps q k v A.
// k, v are (N, g·dk): query head hh reads K/V head hh / (h/g), the engine's grouping.
template <class S>
struct AttnState {
  Vec<S> q, k, v, A, ctx;  // q (N,d), k v (N,g·dk), A (B,h,T,T)
};

// Under RoPE (theta > 0) q and k are kept turned, as the scores read them.
template <class S>
AttnState<S> attention(const Vec<S>& a_in, const Vec<S>& Wq, const Vec<S>* bq, const Vec<S>& Wk, const Vec<S>* bk,
                       const Vec<S>& Wv, const Vec<S>* bv, int64_t B, int64_t T, int64_t d, int64_t h, int64_t g,
                       double theta) {
  const int64_t N = B * T, dk = d / h, kv = g * dk, r = h / g;
  const S scale = S(1) / std::sqrt(S(dk));
  AttnState<S> s{linear(a_in, Wq, bq, N, d, d), linear(a_in, Wk, bk, N, d, kv), linear(a_in, Wv, bv, N, d, kv),
                 Vec<S>(static_cast<size_t>(B * h * T * T)), Vec<S>(static_cast<size_t>(N * d))};
  if (theta > 0) {
    rope_turn(s.q, N, T, d, dk, theta, S(1));
    rope_turn(s.k, N, T, kv, dk, theta, S(1));
  }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t i = 0; i < T; ++i) {
        S* a = &s.A[((b * h + hh) * T + i) * T];
        S mx = -INFINITY;
        for (int64_t j = 0; j <= i; ++j) {  // keys j > i are hidden: weight exactly 0
          S dot = 0;
          for (int64_t e = 0; e < dk; ++e) dot += s.q[(b * T + i) * d + hh * dk + e] * s.k[(b * T + j) * kv + hh / r * dk + e];
          a[j] = dot * scale;
          mx = std::max(mx, a[j]);
        }
        S sum = 0;
        for (int64_t j = 0; j <= i; ++j) sum += (a[j] = std::exp(a[j] - mx));
        for (int64_t j = 0; j <= i; ++j) a[j] /= sum;
        for (int64_t e = 0; e < dk; ++e) {
          S acc = 0;
          for (int64_t j = 0; j <= i; ++j) acc += a[j] * s.v[(b * T + j) * kv + hh / r * dk + e];
          s.ctx[(b * T + i) * d + hh * dk + e] = acc;
        }
      }
  return s;
}

}  // namespace

template <class S>
ReferenceResult<S> reference_loss_and_grads(const ModelConfig& c, const std::vector<std::vector<S>>& params,
                                            const Batch& batch) {
  const std::vector<ParamSpec> specs = param_specs(c);
  std::map<std::string, size_t> idx;
  for (size_t i = 0; i < specs.size(); ++i) idx[specs[i].name] = i;
  auto P = [&](const std::string& n) -> const Vec<S>& { return params[idx.at(n)]; };
  auto Pb = [&](const std::string& n) -> const Vec<S>* { return idx.count(n) ? &params[idx.at(n)] : nullptr; };
  ReferenceResult<S> res;
  for (const ParamSpec& s : specs) res.grads.emplace_back(static_cast<size_t>(numel_of(s.shape)), S(0));
  auto G = [&](const std::string& n) -> Vec<S>& { return res.grads[idx.at(n)]; };
  auto Gb = [&](const std::string& n) -> Vec<S>* { return idx.count(n) ? &res.grads[idx.at(n)] : nullptr; };

  const int64_t B = batch.batch, T = batch.len, d = c.d_model, V = c.vocab, h = c.heads, dk = d / h, N = B * T;
  const int64_t g = c.kv_group_count(), kv = c.kv_dim(), r = h / g;
  const int64_t m = c.mlp_dim();

  // ---- forward, keeping what the backward needs
  // the norms: LayerNorm (w, b) or RMSNorm (w), or none
  auto norm = [&](const Vec<S>& in, const std::string& n) {
    return c.layernorm ? layernorm(in, P(n + ".weight"), P(n + ".bias"), N, d)
           : c.rmsnorm ? rmsnorm(in, P(n + ".weight"), N, d)
                       : in;
  };
  auto norm_back = [&](const Vec<S>& dy, const Vec<S>& in, const std::string& n) {
    return c.layernorm ? layernorm_back(dy, in, P(n + ".weight"), G(n + ".weight"), G(n + ".bias"), N, d)
                       : rmsnorm_back(dy, in, P(n + ".weight"), G(n + ".weight"), N, d);
  };
  Vec<S> x(static_cast<size_t>(N * d));
  for (int64_t r = 0; r < N; ++r)
    for (int64_t i = 0; i < d; ++i)
      x[r * d + i] = P("embed.weight")[batch.tokens[r] * d + i] + (c.rope() ? S(0) : P("pos_embed.weight")[(r % T) * d + i]);
  struct Layer {
    Vec<S> x_in, a_in, x_mid, h_in, f, gate, g, x_out;  // f: fc1 (up), gate: SwiGLU's, g: the activation
    AttnState<S> at;
  };
  std::vector<Layer> L(static_cast<size_t>(c.layers));
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    Layer& ly = L[static_cast<size_t>(l)];
    ly.x_in = x;
    ly.a_in = norm(x, p + "ln");
    ly.at = attention(ly.a_in, P(p + "attn.W_Q.weight"), Pb(p + "attn.W_Q.bias"), P(p + "attn.W_K.weight"),
                      Pb(p + "attn.W_K.bias"), P(p + "attn.W_V.weight"), Pb(p + "attn.W_V.bias"), B, T, d, h, g,
                      c.rope_theta);
    ly.x_mid = add(x, linear(ly.at.ctx, P(p + "attn.W_O.weight"), Pb(p + "attn.W_O.bias"), N, d, d));
    x = ly.x_mid;
    if (c.mlp) {
      ly.h_in = norm(x, p + "ln2");
      ly.f = linear(ly.h_in, P(p + "mlp.fc1.weight"), Pb(p + "mlp.fc1.bias"), N, d, m);
      ly.g = ly.f;
      if (c.swiglu) {  // silu(gate) ⊙ up
        ly.gate = linear(ly.h_in, P(p + "mlp.gate.weight"), Pb(p + "mlp.gate.bias"), N, d, m);
        for (size_t i = 0; i < ly.g.size(); ++i) ly.g[i] = ly.gate[i] * sigmoid(ly.gate[i]) * ly.f[i];
      } else {
        for (S& v : ly.g) v = gelu(v);
      }
      x = add(x, linear(ly.g, P(p + "mlp.fc2.weight"), Pb(p + "mlp.fc2.bias"), N, m, d));
    }
    ly.x_out = x;
  }
  const Vec<S> xf = norm(x, "ln_final");
  res.logits = linear(xf, P(unembed_name(c)), Pb("unembed.bias"), N, d, V);

  // ---- loss: mean cross-entropy over scored positions, and dlogits
  int64_t scored = 0;
  for (int32_t t : batch.targets) scored += t >= 0;
  Vec<S> dlogits(res.logits.size(), S(0));
  for (int64_t r = 0; r < N; ++r) {
    if (batch.targets[r] < 0) continue;
    const S* z = &res.logits[r * V];
    S mx = z[0], sum = 0;
    for (int64_t v = 1; v < V; ++v) mx = std::max(mx, z[v]);
    for (int64_t v = 0; v < V; ++v) sum += std::exp(z[v] - mx);
    res.loss += (std::log(sum) - (z[batch.targets[r]] - mx)) / S(scored);
    for (int64_t v = 0; v < V; ++v) dlogits[r * V + v] = std::exp(z[v] - mx) / sum / S(scored);
    dlogits[r * V + batch.targets[r]] -= S(1) / S(scored);
  }

  // ---- backward
  Vec<S> dx = linear_back(dlogits, xf, P(unembed_name(c)), G(unembed_name(c)), Gb("unembed.bias"), N, d, V);
  if (c.norms()) dx = norm_back(dx, x, "ln_final");
  for (int64_t l = c.layers - 1; l >= 0; --l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    const Layer& ly = L[static_cast<size_t>(l)];
    if (c.mlp) {
      Vec<S> dg = linear_back(dx, ly.g, P(p + "mlp.fc2.weight"), G(p + "mlp.fc2.weight"), Gb(p + "mlp.fc2.bias"), N, m, d);
      Vec<S> dh;
      if (c.swiglu) {  // du = dg ⊙ silu(gate);  dgate = dg ⊙ up ⊙ silu'(gate)
        Vec<S> du(dg.size());
        for (size_t i = 0; i < dg.size(); ++i) {
          const S z = ly.gate[i], sig = sigmoid(z);
          du[i] = dg[i] * z * sig;
          dg[i] *= ly.f[i] * sig * (S(1) + z * (S(1) - sig));
        }
        dh = add(linear_back(dg, ly.h_in, P(p + "mlp.gate.weight"), G(p + "mlp.gate.weight"), Gb(p + "mlp.gate.bias"), N, d, m),
                 linear_back(du, ly.h_in, P(p + "mlp.fc1.weight"), G(p + "mlp.fc1.weight"), Gb(p + "mlp.fc1.bias"), N, d, m));
      } else {
        for (size_t i = 0; i < dg.size(); ++i) dg[i] *= gelu_grad(ly.f[i]);
        dh = linear_back(dg, ly.h_in, P(p + "mlp.fc1.weight"), G(p + "mlp.fc1.weight"), Gb(p + "mlp.fc1.bias"), N, d, m);
      }
      if (c.norms()) dh = norm_back(dh, ly.x_mid, p + "ln2");
      dx = add(dx, dh);
    }
    // attention: out = ctx·W_Oᵀ + b_O
    const Vec<S> dctx = linear_back(dx, ly.at.ctx, P(p + "attn.W_O.weight"), G(p + "attn.W_O.weight"), Gb(p + "attn.W_O.bias"), N, d, d);
    // a K/V head's dk and dv sum over the r query heads that read it
    Vec<S> dq(static_cast<size_t>(N * d)), dkk(static_cast<size_t>(N * kv)), dv(static_cast<size_t>(N * kv));
    const S scale = S(1) / std::sqrt(S(dk));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t hh = 0; hh < h; ++hh)
        for (int64_t i = 0; i < T; ++i) {
          const S* a = &ly.at.A[((b * h + hh) * T + i) * T];
          Vec<S> da(static_cast<size_t>(i + 1));
          for (int64_t j = 0; j <= i; ++j)
            for (int64_t e = 0; e < dk; ++e) {
              const int64_t ci = (b * T + i) * d + hh * dk + e, vj = (b * T + j) * kv + hh / r * dk + e;
              da[j] += dctx[ci] * ly.at.v[vj];
              dv[vj] += a[j] * dctx[ci];
            }
          S dot = 0;
          for (int64_t j = 0; j <= i; ++j) dot += da[j] * a[j];
          for (int64_t j = 0; j <= i; ++j) {
            const S ds = a[j] * (da[j] - dot) * scale;
            for (int64_t e = 0; e < dk; ++e) {
              const int64_t qi = (b * T + i) * d + hh * dk + e, kj = (b * T + j) * kv + hh / r * dk + e;
              dq[qi] += ds * ly.at.k[kj];
              dkk[kj] += ds * ly.at.q[qi];
            }
          }
        }
    if (c.rope()) {  // the scores read the turned q and k: their gradients turn back
      rope_turn(dq, N, T, d, dk, c.rope_theta, S(-1));
      rope_turn(dkk, N, T, kv, dk, c.rope_theta, S(-1));
    }
    Vec<S> da_in = linear_back(dq, ly.a_in, P(p + "attn.W_Q.weight"), G(p + "attn.W_Q.weight"), Gb(p + "attn.W_Q.bias"), N, d, d);
    da_in = add(da_in, linear_back(dkk, ly.a_in, P(p + "attn.W_K.weight"), G(p + "attn.W_K.weight"), Gb(p + "attn.W_K.bias"), N, d, kv));
    da_in = add(da_in, linear_back(dv, ly.a_in, P(p + "attn.W_V.weight"), G(p + "attn.W_V.weight"), Gb(p + "attn.W_V.bias"), N, d, kv));
    if (c.norms()) da_in = norm_back(da_in, ly.x_in, p + "ln");
    dx = add(dx, da_in);
  }
  for (int64_t r = 0; r < N; ++r)
    for (int64_t i = 0; i < d; ++i) {
      G("embed.weight")[batch.tokens[r] * d + i] += dx[r * d + i];
      if (!c.rope()) G("pos_embed.weight")[(r % T) * d + i] += dx[r * d + i];
    }
  return res;
}

template ReferenceResult<float> reference_loss_and_grads(const ModelConfig&, const std::vector<std::vector<float>>&, const Batch&);
template ReferenceResult<double> reference_loss_and_grads(const ModelConfig&, const std::vector<std::vector<double>>&, const Batch&);

}  // namespace attnsim::model
