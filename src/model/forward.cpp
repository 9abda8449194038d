// The model's forward pass and its loss; the backward is in backward.cpp.
#include <cmath>
#include <limits>
#include <vector>

#include "engine/cost.h"
#include "engine/error.h"
#include "engine/fixed_math.h"
#include "engine/parallel.h"
#include "finite.h"
#include "layers.h"
#include "model.h"
#include "tasks.h"

namespace attnsim::model {

// [SECTION] the engine's attention, per layer

MhaConfig attention_config(const ModelConfig& c, int64_t batch, int64_t len) {
  MhaConfig m;
  m.batch = batch;
  m.tq = m.tk = len;
  m.d_model = c.d_model;
  m.heads = c.heads;
  m.kv_heads = c.kv_group_count();  // g < h: the engine's stride-0 broadcast of K/V heads
  m.self_attention = true;
  m.bias = c.bias;
  m.mask.causal = true;
  return m;
}

MhaWeights attention_weights(const Model& model, int64_t layer) {
  const std::string p = "layers." + std::to_string(layer) + ".attn.";
  auto linear = [&](const char* w) {
    const Tensor* bias = model.params.find(p + w + ".bias");
    return Linear{model.params.get(p + w + ".weight"), bias ? *bias : Tensor()};
  };
  return {linear("W_Q"), linear("W_K"), linear("W_V"), linear("W_O")};
}

// [SECTION] memory

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
  if (c.layernorm) per_layer += 2 * BT * d * f;
  if (c.mlp) per_layer += 2 * BT * c.mlp_dim() * f + 2 * BT * d * f;
  bytes += c.layers * per_layer + 3 * BT * V * f + 2 * BT * d * f;
  if (bytes > static_cast<long double>(std::numeric_limits<int64_t>::max() / 2))
    return std::numeric_limits<int64_t>::max() / 2;
  return static_cast<int64_t>(bytes);
}

int64_t predict_forward_bytes(const ModelConfig& c, int64_t B, int64_t T) {
  validate(c);
  if (B <= 0 || T <= 0) throw Error("batch and sequence length must be positive");
  // Every layer's activations stay alive until the forward returns (the backward reads them):
  // the engine's trace (its own prediction), the residual, LN and MLP tensors; then the
  // logits (B,T,V), the term that grows with the vocabulary.
  const long double f = 4, BT = static_cast<long double>(B) * T, d = c.d_model, V = c.vocab;
  const long double score = BT * T * c.heads * f;
  long double per_layer = 3 * score + BT * T + 5 * BT * d * f + 2 * BT * c.kv_dim() * f + BT * d * f;
  if (c.layernorm) per_layer += 2 * BT * d * f;
  if (c.mlp) per_layer += 2 * BT * c.mlp_dim() * f + 2 * BT * d * f;
  const long double bytes = c.layers * per_layer + BT * d * f * (c.layernorm ? 2 : 1) + BT * V * f;
  if (bytes > static_cast<long double>(std::numeric_limits<int64_t>::max() / 4))
    return std::numeric_limits<int64_t>::max() / 4;
  return static_cast<int64_t>(bytes);
}

// [SECTION] forward

static void check_batch(const ModelConfig& c, const Batch& batch) {
  if (batch.batch <= 0 || batch.len <= 0) throw Error("empty batch");
  if (batch.len > c.seq_len)
    throw Error("sequence of " + std::to_string(batch.len) + " tokens is longer than the model's " +
                std::to_string(c.seq_len) + " positions");
  const size_t n = static_cast<size_t>(batch.batch * batch.len);
  if (batch.tokens.size() != n || batch.targets.size() != n || batch.part.size() != n)
    throw Error("batch arrays do not have B·T entries");
  for (int32_t tok : batch.tokens)
    if (tok < 0 || tok >= c.vocab)
      throw Error("token " + std::to_string(tok) + " is out of range for a vocabulary of " + std::to_string(c.vocab));
}

[[noreturn]] static void overflowed(const std::string& tensor) {
  throw Error("the forward pass overflowed float32: first non-finite tensor: " + tensor +
              " (weights or inputs too large; a model whose training diverged)");
}

// refuse: stop with an Error at the first non-finite tensor (forward_finite); else carry the
// values on, for the trainer, which names the tensor with its step itself
static Activations run_forward(const Model& model, const Batch& batch, const Ablation* ablation, bool refuse) {
  const ModelConfig& c = model.config;
  check_batch(c, batch);
  const int64_t B = batch.batch, T = batch.len, d = c.d_model, N = B * T;
  const Params& P = model.params;
  Backend& be = cpu_backend();
  Activations acts;

  // x0 = embed[tokens] + pos_embed[:T]                      (B,T,d)
  acts.x0 = Tensor::empty({B, T, d});
  embedding_forward(batch.tokens.data(), P.get("embed.weight").f32(), P.get("pos_embed.weight").f32(), B, T, d,
                    acts.x0.f32());

  Tensor x = acts.x0;
  auto norm = [&](const std::string& name, const Tensor& in, Tensor& out, Tensor& mean, Tensor& rstd) {
    out = Tensor::empty({B, T, d});
    mean = Tensor::empty({B, T});
    rstd = Tensor::empty({B, T});
    layernorm_forward(in.f32(), P.get(name + ".weight").f32(), P.get(name + ".bias").f32(), N, d, out.f32(),
                      mean.f32(), rstd.f32());
  };
  const MhaConfig attn_config = attention_config(c, B, T);
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    LayerActs la;
    la.x_in = x;
    // a = attn(ln(x)) through the engine: 25 named steps      (B,T,d)
    MhaInputs in;
    if (c.layernorm) norm(p + "ln", x, la.ln_out, la.ln_mean, la.ln_rstd);
    in.query = in.key = in.value = c.layernorm ? la.ln_out : x;
    if (ablation)
      for (const HeadRef& hr : ablation->heads)
        if (hr.layer == l) {
          la.ablated.push_back(hr.head);
          in.head_patches.push_back({hr.head, ablation->mean ? ablation->means.at(l).at(hr.head) : std::vector<float>{}});
        }
    ForwardResult r = attnsim::forward(attn_config, attention_weights(model, l), in, be);
    la.attn = std::move(r.trace);
    // the engine counted its steps' NaN / inf already: stop here rather than run the rest on them
    if (refuse)
      if (const std::string bad = la.attn.first_nonfinite_step(); !bad.empty()) overflowed(p + "attn." + bad);
    // x = x + a                                               (B,T,d)
    const Tensor& a = la.attn.at("out").out;
    la.x_mid = Tensor::empty({B, T, d});
    for (int64_t i = 0; i < N * d; ++i) la.x_mid.f32()[i] = x.f32()[i] + a.f32()[i];
    x = la.x_mid;
    if (c.mlp) {
      // x = x + fc2(gelu(fc1(ln2(x))))                         (B,T,4d) inside
      const Tensor& h_in = c.layernorm ? (norm(p + "ln2", x, la.ln2_out, la.ln2_mean, la.ln2_rstd), la.ln2_out) : x;
      const Tensor* b1 = P.find(p + "mlp.fc1.bias");
      const Tensor* b2 = P.find(p + "mlp.fc2.bias");
      la.fc1_out = be.linear(h_in, P.get(p + "mlp.fc1.weight"), b1 ? *b1 : Tensor());
      la.gelu_out = Tensor::empty(la.fc1_out.shape());
      gelu_forward(la.fc1_out.f32(), la.fc1_out.numel(), la.gelu_out.f32());
      const Tensor m = be.linear(la.gelu_out, P.get(p + "mlp.fc2.weight"), b2 ? *b2 : Tensor());
      la.x_out = Tensor::empty({B, T, d});
      for (int64_t i = 0; i < N * d; ++i) la.x_out.f32()[i] = x.f32()[i] + m.f32()[i];
      x = la.x_out;
    } else {
      la.x_out = x;
    }
    acts.layers.push_back(std::move(la));
  }

  // logits = unembed(ln_final(x))                           (B,T,V)
  if (c.layernorm) norm("ln_final", x, acts.lnf_out, acts.lnf_mean, acts.lnf_rstd);
  const Tensor* bu = P.find("unembed.bias");
  acts.logits = be.linear(c.layernorm ? acts.lnf_out : x, P.get(unembed_name(c)), bu ? *bu : Tensor());
  if (refuse)
    if (const std::string bad = first_nonfinite(acts); !bad.empty()) overflowed(bad);
  return acts;
}

Activations forward(const Model& model, const Batch& batch, const Ablation* ablation) {
  return run_forward(model, batch, ablation, false);
}

Activations forward_finite(const Model& model, const Batch& batch, const Ablation* ablation) {
  return run_forward(model, batch, ablation, true);
}

// [SECTION] loss

LossStats cross_entropy(const Tensor& logits, const Batch& batch, Tensor* dlogits) {
  const int64_t N = batch.batch * batch.len, V = logits.size(-1);
  LossStats s;
  s.parts.resize(kPartCount);
  int64_t scored = 0;
  for (int32_t t : batch.targets) scored += t >= 0;
  if (dlogits) *dlogits = Tensor::zeros(logits.shape());
  const float inv = scored ? 1.0f / static_cast<float>(scored) : 0.0f;
  // rows on the engine's threads, each row's loss and argmax kept; then summed in row order
  // below, so the totals have the same bits at any thread count
  std::vector<double> row_loss(static_cast<size_t>(N));
  std::vector<int64_t> row_arg(static_cast<size_t>(N));
  parallel_for(N, 64, [&](int64_t first, int64_t last) {
    std::vector<float> e(static_cast<size_t>(V));
    for (int64_t r = first; r < last; ++r) {
      const int32_t target = batch.targets[r];
      if (target < 0) continue;
      const float* z = logits.f32() + r * V;
      float mx = z[0];
      int64_t arg = 0;
      for (int64_t v = 1; v < V; ++v)
        if (z[v] > mx) mx = z[v], arg = v;
      // exp(z - max) once, for the loss and the gradient (fixed_math.h: the same bits on every CPU)
      const double sum = fixed::exp_shifted_sum(z, mx, e.data(), V);
      row_loss[r] = fixed::log(sum) - (z[target] - mx);
      row_arg[r] = arg;
      if (dlogits) {  // d(mean loss)/dz = (softmax(z) − onehot(target)) / scored
        float* g = dlogits->f32() + r * V;
        const float inv_sum = static_cast<float>(1.0 / sum);
        for (int64_t v = 0; v < V; ++v) g[v] = e[v] * inv_sum * inv;
        g[target] -= inv;
      }
    }
  });
  for (int64_t r = 0; r < N; ++r) {
    const int32_t target = batch.targets[r];
    if (target < 0) continue;
    for (PartStats* p : {&s.all, &s.parts[batch.part[r]]}) {
      p->loss_sum += row_loss[r];
      p->count += 1;
      p->correct += row_arg[r] == target;
    }
  }
  return s;
}

}  // namespace attnsim::model
