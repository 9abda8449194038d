// The whole pass as named steps (model/whole_pass.h, issue 40): every step of tiny GPT-2,
// Llama (GQA) and Qwen2 models against PyTorch 1.13 (tests/golden/make_hf_golden.py's
// whole/ folders), the logit lens and the direct logit attribution, the toy model through the
// same list, the fast paths against their plain-loop references, and the sampling rules.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <string>

#include "engine/error.h"
#include "engine/npy.h"
#include "helpers.h"
#include "model/formats/checkpoint.h"
#include "model/formats/hf_model.h"
#include "model/pass/generate.h"
#include "model/pass/lens.h"
#include "model/pass/sampling.h"
#include "model/pass/whole_models.h"
#include "model/training/backward.h"

using namespace attnsim;
using namespace attnsim::model;
namespace fs = std::filesystem;

namespace {

std::string golden(const std::string& name) { return std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/" + name; }

std::vector<int32_t> ids_of(const Tensor& t) {
  std::vector<int32_t> out;
  for (float v : t.to_vector()) out.push_back(static_cast<int32_t>(v));
  return out;
}

// the fixtures' sampling (make_hf_golden.py: TEMPERATURE, TOP_K, TOP_P)
const SamplingOptions kFixtureSampling{0.8, 5, 0.9, 0, 0};

}  // namespace

TEST_CASE("every whole-pass step of GPT-2, Llama and Qwen2 matches PyTorch within 1e-4") {
  const auto family = GENERATE(as<std::string>{}, "gpt2", "llama", "qwen2");
  const std::string dir = golden("hf_" + family + "_f32");
  INFO(dir);
  const hf::HfModel hm = hf::load_hf_model(dir);
  const PassModel m = pass_model(hm);
  const WholeTrace w = whole_forward(m, ids_of(read_npy(dir + "/tokens.npy")), kFixtureSampling);
  int compared = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir + "/whole")) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), dir + "/whole").string();  // "logits.npy", "layer_1/mlp_act.npy"
    const std::string name = e.path().stem().string();
    const bool block = rel.find('/') != std::string::npos;
    const Trace& t = block ? w.blocks.at(std::stoul(rel.substr(6, rel.find('/') - 6))) : w.model;
    INFO(rel);
    const Step& s = t.at(name);
    REQUIRE_FALSE(s.skipped());
    CHECK(test::max_abs_diff(s.out.contiguous(), read_npy(e.path().string())) < 1e-4);
    ++compared;
  }
  // 2 layers × (8 block steps + out) for SwiGLU, one fewer for GPT-2; embeddings, norm, logits, sampling
  CHECK(compared == (family == "gpt2" ? 2 * 8 + 8 : 2 * 9 + 7));
  // the skip rules: RoPE has no pos_embed, GPT-2's MLP no gate
  CHECK(w.model.at("pos_embed").skipped() == (family != "gpt2"));
  CHECK(w.blocks[0].at("mlp_gate").skipped() == (family == "gpt2"));
  CHECK(w.blocks[1].at("query").out.shares_storage_with(w.blocks[1].at("norm_attn").out));

  // the logit lens: the embeddings and each block through the final norm; the last is the logits
  const LogitLens lens = logit_lens(m, w);
  const Tensor want = read_npy(dir + "/lens.npy");  // (L+1, V)
  REQUIRE(static_cast<int64_t>(lens.rows.size()) == want.size(0));
  for (size_t r = 0; r < lens.rows.size(); ++r)
    CHECK(test::max_abs_diff(Tensor::from_values({want.size(1)}, lens.rows[r].logits), want.narrow(0, r, 1).view({want.size(1)})) < 1e-4);
  CHECK(lens.target == ids_of(read_npy(dir + "/dla_target.npy"))[0]);
  CHECK(lens.rows.back().target_prob == Approx(lens.rows.back().top_prob));

  // direct logit attribution: each part as PyTorch computes it, and they sum to the logit
  const LogitAttribution a = attribute_logit(m, w);
  const std::vector<float> parts = read_npy(dir + "/dla.npy").to_vector();
  REQUIRE(a.parts.size() == parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    INFO(a.parts[i].name);
    CHECK(std::fabs(a.parts[i].value - parts[i]) < 1e-4);
  }
  CHECK(std::fabs(a.sum() - a.logit) < 1e-4);
}

TEST_CASE("the toy model runs the same list: the trainer's batch is each sequence's pass, its skips its options") {
  ModelConfig c;
  c.vocab = 11, c.seq_len = 8, c.d_model = 16, c.heads = 4, c.layers = 2, c.layernorm = true, c.mlp = true;
  const Model toy = init_model(c);
  const std::vector<int32_t> tokens = {0, 3, 5, 3, 5, 9}, other = {0, 7, 7, 1, 2, 10};
  const PassModel m = pass_model(toy);
  const WholeTrace w = whole_forward(m, tokens);
  // the trainer's forward runs the same pass over a batch: row 0 is `tokens` alone
  Batch b = batch_from_tokens({tokens, other});
  const Activations acts = forward(toy, b);
  auto row0 = [](const Tensor& t) { return t.narrow(0, 0, 1).contiguous(); };
  CHECK(test::max_abs_diff(w.model.at("embed").out, row0(acts.x0)) < 1e-6);
  for (int64_t l = 0; l < 2; ++l) {
    const Trace& t = w.blocks[static_cast<size_t>(l)];
    const LayerActs& la = acts.layers[static_cast<size_t>(l)];
    CHECK(test::max_abs_diff(t.at("norm_attn").out, row0(la.ln_out)) < 1e-5);
    CHECK(test::max_abs_diff(t.at("alpha").out, row0(la.attn.at("alpha").out)) < 1e-6);
    CHECK(test::max_abs_diff(t.at("resid_attn").out, row0(la.x_mid)) < 1e-5);
    CHECK(test::max_abs_diff(t.at("mlp_up").out, row0(la.fc1_out)) < 1e-5);
    CHECK(test::max_abs_diff(t.at("mlp_act").out, row0(la.gelu_out)) < 1e-5);
    CHECK(test::max_abs_diff(t.at("resid_mlp").out, row0(la.x_out)) < 1e-5);
    CHECK(t.at("mlp_gate").note == "GELU MLP: no gate");
    CHECK(la.attn.steps.front().name == "query");  // the trainer's layer trace is the engine's steps
    CHECK(la.attn.steps.back().name == "out");
  }
  CHECK(test::max_abs_diff(w.model.at("norm_final").out, row0(acts.lnf_out)) < 1e-5);
  CHECK(test::max_abs_diff(w.logits(), row0(acts.logits)) < 1e-5);
  CHECK(acts.logits.size(0) == 2);
  // keeping one block's steps (its MLP activation then runs in place in the others) changes no value
  PassOptions one;
  one.keep_layer = 1;
  const WholeTrace thin = whole_forward(m, tokens, {}, one);
  CHECK(test::max_abs_diff(thin.logits(), w.logits()) == 0.0);
  CHECK(thin.blocks[0].steps.size() == 2);  // alpha and ctx_heads
  CHECK(test::max_abs_diff(thin.blocks[0].at("alpha").out, w.blocks[0].at("alpha").out) == 0.0);
  CHECK(thin.blocks[1].steps.size() == w.blocks[1].steps.size());
  CHECK(test::max_abs_diff(whole_forward(m, other).logits(), acts.logits.narrow(0, 1, 1).contiguous()) < 1e-5);
  const LogitAttribution a = attribute_logit(m, w);
  CHECK(std::fabs(a.sum() - a.logit) < 1e-4);

  // the shipped checkpoint has neither norms nor MLP: listed and skipped; the stream is resid_attn
  const Model shipped = [] {
    ModelConfig s;
    s.vocab = 9, s.seq_len = 6, s.d_model = 8, s.heads = 2, s.layers = 2;
    return init_model(s);
  }();
  const PassModel bare = pass_model(shipped);
  const WholeTrace wb = whole_forward(bare, {0, 1, 2});
  for (const char* s : {"norm_attn", "norm_mlp", "mlp_up", "mlp_act", "mlp_down", "resid_mlp"}) CHECK(wb.blocks[1].at(s).skipped());
  CHECK(wb.model.at("norm_final").skipped());
  CHECK(&block_output(bare, wb.blocks[1]) == &wb.blocks[1].at("resid_attn").out);
  const LogitAttribution ab = attribute_logit(bare, wb, 1, 4);
  CHECK(std::fabs(ab.sum() - ab.logit) < 1e-4);
  // one list: every model's paths are the same names in the same order
  CHECK(whole_step_paths(bare, 3).size() == whole_step_paths(m, 3).size());
  CHECK(whole_step_paths(m, 3).front() == "tok_embed");
  CHECK(whole_step_paths(m, 3)[3] == "layer_0/norm_attn");
  CHECK(whole_step_paths(m, 3).back() == "next_token");
}

// Decode is the same pass over per-layer KV caches: the shipped language model (LayerNorm, MLP)
// fed a prompt, then one token at a time, gives the full pass's rows; generate() decodes so.
TEST_CASE("the language model decodes over KV caches: each step's logits are the full pass's row", "[model]") {
  const Model lm = load_checkpoint(std::string(ATTNSIM_SOURCE_DIR) + "/assets/models/wordnet-lm-s1");
  REQUIRE(lm.config.layernorm);
  REQUIRE(lm.config.mlp);
  const PassModel m = pass_model(lm);
  const std::vector<int32_t> seq = {0, 17, 301, 42, 9, 250, 17, 301, 42};
  const Tensor full = whole_forward(m, seq).logits();  // (1,T,V)
  const MhaConfig a = m.attention(1);
  std::vector<KvCache> caches;
  for (int64_t l = 0; l < m.layers; ++l) caches.emplace_back(1, a.kv_group_count(), a.head_dim(), 16);
  PassOptions o;
  o.sample = false;
  o.caches = &caches;
  const int64_t prompt = 4, V = m.vocab;
  WholeTrace step = whole_forward(m, {seq.begin(), seq.begin() + prompt}, {}, o);
  CHECK(test::max_abs_diff(step.logits(), full.narrow(1, 0, prompt).contiguous()) < 1e-4);
  CHECK(step.blocks[0].find("k_cache_append") != nullptr);  // the cached call's steps, in the list
  for (int64_t t = prompt; t < static_cast<int64_t>(seq.size()); ++t) {
    step = whole_forward(m, {seq[static_cast<size_t>(t)]}, {}, o);
    CHECK(caches[0].length() == t + 1);
    CHECK(test::max_abs_diff(step.logits(), full.narrow(1, t, 1).contiguous()) < 1e-4);
  }
  CHECK_THROWS_WITH(whole_forward(m, std::vector<int32_t>(8, 1), {}, o), Catch::Contains("decode past the cache"));

  // generate(): greedy over the caches picks each step's argmax of the full pass over the text so far
  const std::vector<int32_t> out = generate(lm, {seq.begin(), seq.begin() + prompt}, 5, SamplingOptions{});
  REQUIRE(out.size() == static_cast<size_t>(prompt + 5));
  for (int64_t t = prompt; t < prompt + 5; ++t) {
    const Tensor rows = whole_forward(m, {out.begin(), out.begin() + t}).logits().contiguous();
    const float* r = rows.f32() + (t - 1) * V;
    CHECK(out[static_cast<size_t>(t)] == static_cast<int32_t>(std::max_element(r, r + V) - r));
  }
}

TEST_CASE("the norms, activations and softmax agree with their plain-loop references") {
  const Tensor x = Tensor::from_values({1, 3, 5}, {0.5f, -1, 2, 3, -4, 1e-3f, 7, -7, 0.25f, 9, 1, 1, 1, 1, 1.5f});
  const Tensor w = Tensor::from_values({5}, {1, 0.5f, -2, 1.5f, 1}), bias = Tensor::from_values({5}, {0.1f, 0, -0.2f, 0.3f, 0});
  for (NormKind k : {NormKind::LayerNorm, NormKind::RmsNorm})
    CHECK(test::max_abs_diff(apply_norm(k, x, w, bias, 1e-5), apply_norm_reference(k, x, w, bias, 1e-5)) < 2e-6);
  std::vector<float> v = {-30, -5, -1, -1e-3f, 0, 1e-3f, 0.7f, 3, 12, 40}, ref(v.size());
  for (Activation act : {Activation::GeluErf, Activation::GeluTanh, Activation::Silu}) {
    std::vector<float> fast = v;
    activate(act, fast.data(), static_cast<int64_t>(fast.size()), fast.data());
    activate_reference(act, v.data(), static_cast<int64_t>(v.size()), ref.data());
    for (size_t i = 0; i < v.size(); ++i) CHECK(fast[i] == Approx(ref[i]).margin(1e-6).epsilon(1e-5));
  }
  const Tensor logits = Tensor::from_values({1, 2, 4}, {1, 2, 3, 4, -50, 0, 50, 50});
  for (double t : {0.0, 0.5, 1.0, 7.0})
    CHECK(test::max_abs_diff(softmax_at(logits, t), softmax_at_reference(logits, t)) < 1e-6);
}

namespace {

// The filters as first written: the whole vocabulary ranked by a stable sort, then walked. The
// fast path ranks only the head it needs (a partial sort) and must give the same bits.
SampledRow sample_row_full_sort(const float* l, int64_t V, const SamplingOptions& o) {
  const double mx = *std::max_element(l, l + V);
  std::vector<double> w(static_cast<size_t>(V));
  for (int64_t i = 0; i < V; ++i) w[i] = std::exp((l[i] - mx) / o.temperature);
  std::vector<int32_t> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return l[a] > l[b]; });
  const int64_t k = o.top_k > 0 ? o.top_k : V;
  for (int64_t j = k; j < V; ++j) w[order[j]] = 0;
  auto normalised = [](const std::vector<double>& v) {
    const double z = std::accumulate(v.begin(), v.end(), 0.0);
    std::vector<float> p(v.size());
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<float>(v[i] / z);
    return p;
  };
  SampledRow r;
  r.top_k = normalised(w);
  if (o.top_p < 1) {
    const double z = std::accumulate(w.begin(), w.end(), 0.0);
    double before = 0;
    for (int64_t j = 0; j < k; ++j) {
      const double q = w[order[j]] / z;
      if (before >= o.top_p) w[order[j]] = 0;
      before += q;
    }
  }
  r.top_p = normalised(w);
  return r;
}

}  // namespace

TEST_CASE("sampling ranks only the head it needs, with the bits of a full sort", "[sampling]") {
  for (const uint64_t seed : {1u, 2u, 3u}) {
    const int64_t V = 5000;
    std::vector<float> l(static_cast<size_t>(V));
    uint64_t x = seed * 0x9E3779B97F4A7C15ull;
    for (float& v : l) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      v = static_cast<float>(static_cast<int64_t>(x % 4000) - 2000) / 200.0f;  // many exact ties
    }
    for (const double t : {0.3, 1.0, 3.0})
      for (const int64_t k : {int64_t{0}, int64_t{1}, int64_t{40}, int64_t{700}, V})
        for (const double p : {1.0, 0.5, 0.9, 0.999}) {
          SamplingOptions o;
          o.temperature = t;
          o.top_k = k;
          o.top_p = p;
          const SampledRow fast = sample_row(l.data(), V, o), full = sample_row_full_sort(l.data(), V, o);
          CHECK(fast.top_k == full.top_k);
          CHECK(fast.top_p == full.top_p);
        }
  }
}

TEST_CASE("sampling: temperature to 0 is greedy, top-k V and top-p 1 change nothing, ties go to the lowest id, seeds repeat") {
  const Tensor fixture = read_npy(golden("hf_llama_f32/logits.npy"));  // (T,V)
  const int64_t T = fixture.size(0), V = fixture.size(1);
  for (int64_t r = 0; r < T; ++r) {
    const float* row = fixture.f32() + r * V;
    const int32_t greedy = sample_row(row, V, {}).next;
    for (uint64_t seed = 0; seed < 20; ++seed) {
      CHECK(sample_row(row, V, {1e-6, 0, 1.0, seed, r}).next == greedy);
      const SampledRow plain = sample_row(row, V, {1.3, 0, 1.0, seed, r});
      const SampledRow all = sample_row(row, V, {1.3, V, 1.0, seed, r});
      CHECK(all.next == plain.next);
      CHECK(all.top_p == plain.top_k);  // the kept probabilities are softmax(logits / t) itself
      CHECK(sample_row(row, V, {1.3, 3, 0.5, seed, r}).next == sample_row(row, V, {1.3, 3, 0.5, seed, r}).next);
    }
  }
  // ties: ids 1 and 2 share the largest logit
  const std::vector<float> tied = {1, 3, 3, 0};
  CHECK(sample_row(tied.data(), 4, {}).next == 1);
  const SampledRow k1 = sample_row(tied.data(), 4, {1.0, 1, 1.0, 0, 0});
  CHECK(k1.top_k == std::vector<float>{0, 1, 0, 0});
  CHECK(k1.next == 1);
  // top-p: masses (ranked) 0.5, 0.3, 0.2 → p 0.6 keeps the first two (0.5 < 0.6), p 0.5 the first alone
  const std::vector<float> l = {std::log(0.3f), std::log(0.5f), std::log(0.2f)};
  const SampledRow p6 = sample_row(l.data(), 3, {1.0, 0, 0.6, 0, 0});
  CHECK(p6.top_p[0] == Approx(0.375));
  CHECK(p6.top_p[1] == Approx(0.625));
  CHECK(p6.top_p[2] == 0);
  CHECK(sample_row(l.data(), 3, {1.0, 0, 0.5, 0, 0}).top_p == std::vector<float>{0, 1, 0});
  // a draw repeats for a seed and step; some seed draws another token
  bool differs = false;
  for (uint64_t s = 0; s < 50; ++s) differs |= sample_row(l.data(), 3, {1.0, 0, 1.0, s, 0}).next != 1;
  CHECK(differs);
  // bad options: one Error each
  for (const SamplingOptions& bad : {SamplingOptions{std::nan(""), 0, 1, 0, 0}, SamplingOptions{-1, 0, 1, 0, 0},
                                     SamplingOptions{1e308, 0, 1, 0, 0}, SamplingOptions{1, 4, 1, 0, 0},
                                     SamplingOptions{1, 0, 0, 0, 0}, SamplingOptions{1, 0, 1.5, 0, 0}})
    CHECK_THROWS_AS(validate_sampling(bad, 3), attnsim::Error);
  CHECK_THROWS_WITH(validate_sampling({1e308, 0, 1, 0, 0}, 3), Catch::Contains("overflows float32"));
  // the sampling steps recomputed from kept logits: what a view calls with new options
  const Trace s = sampling_trace(fixture.view({1, T, V}), kFixtureSampling);
  CHECK(s.at("probs").out.shape() == Dims{1, T, V});
  CHECK(s.at("top_k").out.shape() == Dims{1, V});
  CHECK(sampling_trace(fixture.view({1, T, V}), {}).at("top_p").skipped());
}
