// The model's backward, checked three ways:
//   1. the plain-loop reference in double against central finite differences,
//   2. the fast path (BLAS, the engine's trace) against the reference, op for op,
//   3. both against PyTorch 1.13's gradients (tests/golden/model_*, make_model_golden.py).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "engine/npy.h"
#include "helpers.h"
#include "model/training/adamw.h"
#include "model/formats/checkpoint.h"
#include "model/pass/forward.h"
#include "model/training/backward.h"
#include "model/training/reference.h"
#include "model/training/tasks.h"

using namespace attnsim;
using namespace attnsim::model;
using attnsim::test::max_abs_diff;

namespace {

ModelConfig tiny_config(bool ln_mlp) {
  ModelConfig c;
  c.vocab = 7;
  c.seq_len = 5;
  c.d_model = 8;
  c.heads = 2;
  c.layers = 2;
  c.layernorm = c.mlp = ln_mlp;
  c.seed = 3;
  return c;
}

// The configs every gradient check runs on: MHA without and with LN + MLP, then 4 query
// heads (dk = 2) sharing 2 K/V heads (GQA) and 1 (MQA), then GPT-2's tied form and Llama's.
struct NamedConfig {
  const char* name;
  ModelConfig config;
};
std::vector<NamedConfig> grad_configs() {
  std::vector<NamedConfig> out{{"attention-only", tiny_config(false)}, {"ln+mlp", tiny_config(true)}};
  for (int64_t g : {2, 1}) {
    ModelConfig c = tiny_config(g == 1);
    c.heads = 4;
    c.kv_heads = g;
    out.push_back({g == 2 ? "gqa h=4 g=2" : "mqa h=4 g=1, ln+mlp", c});
  }
  ModelConfig gpt2 = tiny_config(true);  // GPT-2's form: embed.weight is the unembedding too
  gpt2.tied = true;
  out.push_back({"tied, ln+mlp", gpt2});
  // Llama's form: RMSNorm, rotary positions (a small base, so that 5 positions turn far), SwiGLU,
  // no biases; untied with MHA, then tied with 4 query heads on 2 K/V heads (dk = 2)
  ModelConfig llama = tiny_config(true);
  llama.layernorm = false;
  llama.rmsnorm = llama.swiglu = true;
  llama.rope_theta = 10.0;
  llama.bias = false;
  out.push_back({"llama: rmsnorm+rope+swiglu", llama});
  llama.tied = true;
  llama.heads = 4;
  llama.kv_heads = 2;
  out.push_back({"llama tied, gqa h=4 g=2", llama});
  return out;
}

Batch tiny_batch() { return batch_from_tokens({{0, 3, 1, 3, 1}, {0, 5, 2, 6, 4}}); }

// Larger linear maps than init_model() so the test sees sharp attention, and LayerNorm
// weights away from 1 / 0 (embeddings keep their N(0, 1)).
Model scaled_model(const ModelConfig& c) {
  Model m = init_model(c);
  for (size_t i = 0; i < m.params.names.size(); ++i) {
    float* p = m.params.tensors[i].f32();
    for (int64_t k = 0; k < m.params.tensors[i].numel(); ++k)
      p[k] = m.params.names[i].find("embed") != std::string::npos ? p[k]
             : m.params.names[i].find("ln") != std::string::npos  ? p[k] + 0.1f * std::sin(static_cast<float>(k))
                                                                   : 3.0f * p[k];
  }
  return m;
}

// max |a-b| / max |b| over one parameter, with a floor of 1e-2 of the largest gradient of
// the model (`floor`): the key bias's exact gradient is 0 (softmax ignores a constant added
// to a row, and q·b_K is one), so every implementation returns rounding noise there.
double rel_err(const std::vector<double>& a, const std::vector<double>& b, double floor) {
  double diff = 0, scale = floor;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return diff / scale;
}

template <class Grads>
double grad_floor(const Grads& grads) {
  double m = 0;
  for (const auto& g : grads)
    for (double v : g) m = std::max(m, std::abs(v));
  return 1e-2 * m;
}

std::vector<double> as_double(const Tensor& t) {
  const auto v = t.to_vector();
  return {v.begin(), v.end()};
}

}  // namespace

TEST_CASE("model: the double-precision reference backward matches finite differences", "[model]") {
  for (const auto& [name, c] : grad_configs()) {
    const Model m = scaled_model(c);
    const Batch batch = tiny_batch();
    auto params = params_as<double>(m.params);
    const ReferenceResult<double> ref = reference_loss_and_grads(c, params, batch);
    const double eps = 1e-6;
    for (size_t p = 0; p < params.size(); ++p) {
      std::vector<double> fd(params[p].size());
      for (size_t i = 0; i < params[p].size(); ++i) {
        const double keep = params[p][i];
        params[p][i] = keep + eps;
        const double up = reference_loss_and_grads(c, params, batch).loss;
        params[p][i] = keep - eps;
        const double down = reference_loss_and_grads(c, params, batch).loss;
        params[p][i] = keep;
        fd[i] = (up - down) / (2 * eps);
      }
      INFO(name << " " << m.params.names[p]);
      CHECK(rel_err(ref.grads[p], fd, grad_floor(ref.grads)) < 1e-6);
    }
  }
}

TEST_CASE("model: the fast backward matches the plain-loop reference", "[model]") {
  for (const auto& [name, c] : grad_configs()) {
    const Model m = scaled_model(c);
    const Batch batch = tiny_batch();
    const ReferenceResult<double> ref = reference_loss_and_grads(c, params_as<double>(m.params), batch);
    const Activations acts = forward(m, batch);
    Tensor dlogits;
    const LossStats ls = cross_entropy(acts.logits, batch, &dlogits);
    CHECK(ls.all.loss() == Approx(ref.loss).epsilon(1e-5));
    Params grads = zeros_like(m.params);
    backward(m, batch, acts, dlogits, grads);
    // the float reference takes the same loops in float: the fast path's logits agree with it
    const ReferenceResult<float> ref32 = reference_loss_and_grads(c, params_as<float>(m.params), batch);
    INFO(name);
    CHECK(max_abs_diff(acts.logits, Tensor::from_values(acts.logits.shape(), ref32.logits)) < 1e-4);
    for (size_t p = 0; p < grads.names.size(); ++p) {
      INFO(grads.names[p]);
      CHECK(grads.tensors[p].shape() == param_specs(c)[p].shape);
      CHECK(rel_err(as_double(grads.tensors[p]), ref.grads[p], grad_floor(ref.grads)) < 1e-4);
    }
  }
}

TEST_CASE("model: loss, gradients and one AdamW step match PyTorch 1.13", "[model]") {
  for (const char* name : {"attn_only", "ln_mlp", "llama"}) {
    const std::string dir = std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/model_" + name;
    Model m = load_checkpoint(dir + "/params");
    const auto tok = read_npy(dir + "/tokens.npy").to_vector(), tgt = read_npy(dir + "/targets.npy").to_vector();
    const int64_t B = 3, T = m.config.seq_len;
    Batch batch = batch_from_tokens(std::vector<std::vector<int32_t>>(B, std::vector<int32_t>(T, 0)));
    for (size_t i = 0; i < tok.size(); ++i) {
      batch.tokens[i] = static_cast<int32_t>(tok[i]);
      batch.targets[i] = static_cast<int32_t>(tgt[i]);
    }
    const Activations acts = forward(m, batch);
    Tensor dlogits;
    const LossStats ls = cross_entropy(acts.logits, batch, &dlogits);
    INFO(name);
    CHECK(ls.all.loss() == Approx(read_npy(dir + "/loss.npy").to_vector()[0]).epsilon(1e-5));
    Params grads = zeros_like(m.params);
    backward(m, batch, acts, dlogits, grads);
    std::vector<std::vector<double>> want;
    for (const std::string& n : grads.names) want.push_back(as_double(read_npy(dir + "/grads/" + n + ".npy")));
    for (size_t p = 0; p < grads.names.size(); ++p) {
      INFO(grads.names[p]);
      CHECK(rel_err(as_double(grads.tensors[p]), want[p], grad_floor(want)) < 1e-4);
    }
    AdamWConfig ac;
    ac.lr = 1e-2f;
    ac.weight_decay = 0.1f;
    ac.warmup = 0;
    ac.clip = 0;
    AdamW opt(m.params, ac);
    opt.step(m.params, grads);
    // Adam divides by sqrt(v): a gradient at rounding-noise level becomes a step of arbitrary
    // size and sign in both implementations, so there is nothing to compare. That is the key
    // bias's whole gradient, and any element below 1e-5 of the model's largest (one of
    // llama's fc2 weights has 2e-7 against 0.1, its step 0.96·lr ± what its last digits say).
    const double noise = 1e-3 * grad_floor(want);
    for (size_t p = 0; p < grads.names.size(); ++p) {
      if (grads.names[p].find("W_K.bias") != std::string::npos) continue;
      INFO("after AdamW: " << grads.names[p]);
      std::vector<double> got = as_double(m.params.tensors[p]), after = as_double(read_npy(dir + "/after_adamw/" + grads.names[p] + ".npy"));
      int64_t kept = 0;
      for (size_t i = 0; i < got.size(); ++i)
        if (want[p][i] != 0 && std::abs(want[p][i]) < noise) got[i] = after[i];  // 0: an unused row, exact
        else ++kept;
      CHECK(kept >= static_cast<int64_t>(got.size()) - 2);  // the mask leaves out a few elements, not a tensor
      CHECK(rel_err(got, after, 0) < 1e-5);
    }
  }
}
