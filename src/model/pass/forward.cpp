// The model's forward pass and its loss; the backward is in training/backward.cpp.
#include "model/pass/forward.h"

#include <cmath>
#include <limits>
#include <vector>

#include "engine/cost.h"
#include "engine/error.h"
#include "engine/fixed_math.h"
#include "engine/parallel.h"
#include "model/pass/whole_models.h"
#include "model/pass/whole_pass.h"

namespace attnsim::model {

// [SECTION] memory

int64_t predict_forward_bytes(const ModelConfig& c, int64_t B, int64_t T) {
  validate(c);
  if (B <= 0 || T <= 0) throw Error("batch and sequence length must be positive");
  // Every layer's activations stay alive until the forward returns (the backward reads them):
  // the engine's trace (its own prediction), the residual, LN and MLP tensors; then the
  // logits (B,T,V), the term that grows with the vocabulary.
  const long double f = 4, BT = static_cast<long double>(B) * T, d = c.d_model, V = c.vocab;
  const long double score = BT * T * c.heads * f;
  long double per_layer = 3 * score + BT * T + 5 * BT * d * f + 2 * BT * c.kv_dim() * f + BT * d * f;
  if (c.norms()) per_layer += 2 * BT * d * f;
  if (c.rope()) per_layer += BT * (d + c.kv_dim()) * f;  // q_rot, k_rot
  if (c.mlp) per_layer += (c.swiglu ? 3 : 2) * BT * c.mlp_dim() * f + 2 * BT * d * f;
  const long double bytes = c.layers * per_layer + BT * d * f * (c.norms() ? 2 : 1) + BT * V * f;
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
}  // token ids: the pass checks them (whole_pass.cpp check_rows)

// The one pass (whole_pass.h) over the batch, its norms' statistics kept; each layer's
// activations are the pass's step tensors (shared, not copied). refuse: stop with an Error at
// the first non-finite step (forward_finite); else carry the values on, for the trainer,
// which names the tensor itself.
static Activations run_forward(const Model& model, const Batch& batch, const Ablation* ablation, bool refuse) {
  const ModelConfig& c = model.config;
  check_batch(c, batch);
  PassOptions o;
  o.batch = batch.batch;
  o.sample = false;
  o.refuse_nonfinite = refuse;
  o.norm_stats = c.norms();
  o.patches.resize(static_cast<size_t>(c.layers));
  if (ablation)
    for (const HeadRef& hr : ablation->heads)
      o.patches.at(static_cast<size_t>(hr.layer))
          .push_back({hr.head, ablation->mean ? ablation->means.at(hr.layer).at(hr.head) : std::vector<float>{}});
  WholeTrace w = whole_forward(pass_model(model), batch.tokens, {}, o);

  Activations acts;
  acts.x0 = w.model.at("embed").out;  // (B,T,d)
  Tensor x = acts.x0;
  for (int64_t l = 0; l < c.layers; ++l) {
    const size_t i = static_cast<size_t>(l);
    Trace& t = w.blocks[i];
    LayerActs la;
    la.x_in = x;
    if (c.norms()) la.ln_out = t.at("norm_attn").out, la.ln_mean = w.norm_attn_stats[i].mean, la.ln_rstd = w.norm_attn_stats[i].rstd;
    for (const HeadPatch& p : o.patches[i]) la.ablated.push_back(p.head);
    la.x_out = la.x_mid = t.at("resid_attn").out;
    if (c.mlp) {
      if (c.norms()) la.ln2_out = t.at("norm_mlp").out, la.ln2_mean = w.norm_mlp_stats[i].mean, la.ln2_rstd = w.norm_mlp_stats[i].rstd;
      if (c.swiglu) la.gate_out = t.at("mlp_gate").out;
      la.fc1_out = t.at("mlp_up").out, la.gelu_out = t.at("mlp_act").out, la.x_out = t.at("resid_mlp").out;
    }
    la.attn = attention_steps_of(std::move(t));
    x = la.x_out;
    acts.layers.push_back(std::move(la));
  }
  if (c.norms()) acts.lnf_out = w.model.at("norm_final").out, acts.lnf_mean = w.norm_final_stats.mean, acts.lnf_rstd = w.norm_final_stats.rstd;
  acts.logits = w.logits();
  return acts;
}

Activations forward(const Model& model, const Batch& batch, const Ablation* ablation) {
  return run_forward(model, batch, ablation, false);
}

Activations forward_finite(const Model& model, const Batch& batch, const Ablation* ablation) {
  return run_forward(model, batch, ablation, true);
}

// [SECTION] batches

const char* part_name(int part) {
  static const char* const names[] = {"other", "first", "repeat-start", "repeat", "copy", "recall", "gist-first", "gist"};
  return part >= 0 && part < kPartCount ? names[part] : "?";
}

Batch batch_from_tokens(const std::vector<std::vector<int32_t>>& seqs) {
  if (seqs.empty() || seqs[0].empty()) throw Error("no tokens given");
  const int64_t B = static_cast<int64_t>(seqs.size()), T = static_cast<int64_t>(seqs[0].size());
  Batch out{B, T, {}, {}, {}};
  out.part.assign(static_cast<size_t>(B * T), kOther);
  for (const std::vector<int32_t>& s : seqs) {
    if (static_cast<int64_t>(s.size()) != T) throw Error("sequences in one batch must have the same length");
    for (int64_t t = 0; t < T; ++t) {
      out.tokens.push_back(s[t]);
      out.targets.push_back(t + 1 == T ? -1 : s[t + 1]);
    }
  }
  return out;
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
