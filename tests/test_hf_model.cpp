// Hugging Face folders: tiny GPT-2, Llama (GQA) and Qwen2 (q/k/v biases) models written by
// tests/golden/make_hf_golden.py in F32, F16 and BF16, against plain-PyTorch references of
// HF's semantics: every layer's attention weights, the logits and a greedy decode.
#include <catch2/catch.hpp>

#include <string>

#include "engine/npy.h"
#include "engine/packed_weights.h"
#include "helpers.h"
#include "model/experiments/hf_eval.h"
#include "model/pass/hf_forward.h"
#include "model/formats/hf_model.h"

using namespace attnsim;
using namespace attnsim::model::hf;

namespace {

std::string golden(const std::string& name) { return std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/" + name; }

std::vector<int32_t> ids_of(const Tensor& t) {
  std::vector<int32_t> out;
  for (float v : t.to_vector()) out.push_back(static_cast<int32_t>(v));
  return out;
}

}  // namespace

TEST_CASE("tiny HF models match PyTorch: every layer's alpha, the logits, a greedy decode") {
  const auto name = GENERATE(as<std::string>{}, "gpt2_f32", "gpt2_f16", "gpt2_bf16", "llama_f32", "llama_f16", "llama_bf16",
                             "qwen2_f32", "qwen2_f16", "qwen2_bf16", "llama3_f32");  // llama3: rope_scaling
  const std::string family = name.substr(0, name.find('_'));
  const std::string dir = golden("hf_" + name);
  INFO(dir);
  const HfModel m = load_hf_model(dir);
  const std::vector<int32_t> tokens = ids_of(read_npy(dir + "/tokens.npy"));
  const HfForward run = hf_forward(m, tokens);
  const int64_t T = static_cast<int64_t>(tokens.size());
  for (int64_t l = 0; l < m.config.layers; ++l) {
    INFO("layer " << l);
    const Tensor alpha = read_npy(dir + "/alpha_" + std::to_string(l) + ".npy");
    CHECK(run.alpha[static_cast<size_t>(l)].shape() == Dims{1, m.config.heads, T, T});
    CHECK(test::max_abs_diff(run.alpha[static_cast<size_t>(l)], alpha) < 1e-4);
    // every layer is the engine's trace, with RoPE as its own steps in the Llama family
    const Trace& t = run.traces[static_cast<size_t>(l)];
    CHECK(t.at("q_rot").skipped() == (family == "gpt2"));
    CHECK(t.at("mask").note == "causal");
    CHECK((t.find("k_grouped") != nullptr) == (family != "gpt2"));  // Llama 4:2, Qwen2 4:1 heads
  }
  CHECK(test::max_abs_diff(run.logits, read_npy(dir + "/logits.npy")) < 1e-4);

  // greedy with the KV cache: prefill, then one token at a time
  const std::vector<int32_t> expected = ids_of(read_npy(dir + "/greedy.npy"));
  HfDecoder dec(m, T + static_cast<int64_t>(expected.size()));
  std::vector<float> logits = dec.feed(tokens);
  // the prefill's last row is the full forward's
  const std::vector<float> last(run.logits.f32() + (T - 1) * m.config.vocab, run.logits.f32() + T * m.config.vocab);
  double worst = 0;
  for (size_t i = 0; i < last.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(last[i]) - logits[i]));
  CHECK(worst < 1e-4);
  std::vector<int32_t> got;
  for (size_t s = 0; s < expected.size(); ++s) {
    got.push_back(top_k(logits, 1)[0].token);
    if (s + 1 < expected.size()) logits = dec.feed({got.back()});
  }
  CHECK(got == expected);
}

TEST_CASE("Qwen2's o_proj has no bias and its q/k/v do; Llama's untied lm_head is its own tensor") {
  const HfModel q = load_hf_model(golden("hf_qwen2_f32"));
  CHECK(q.layers[0].attn.W_Q.bias.defined());
  CHECK(q.layers[0].attn.W_K.bias.shape() == Dims{4});  // one K/V head of d_k 4
  CHECK_FALSE(q.layers[0].attn.W_O.bias.defined());
  CHECK(q.unembed.shares_storage_with(q.embed));
  const HfModel l = load_hf_model(golden("hf_llama_f32"));
  CHECK_FALSE(l.layers[0].attn.W_Q.bias.defined());
  CHECK_FALSE(l.unembed.shares_storage_with(l.embed));
  const Linear& wk = l.layers[1].attn.W_K;  // (g·dk, d); held packed only where the build packs
  CHECK((wk.packed ? Dims{wk.packed->out(), wk.packed->in()} : wk.weight.shape()) == Dims{8, 16});
  // GPT-2's Conv1D c_attn (d, 3d) became three nn.Linear weights (d, d)
  const HfModel g = load_hf_model(golden("hf_gpt2_f16"));  // the "transformer."-prefixed file
  REQUIRE(g.widened_per_layer());  // F16: each layer widened when it is used
  CHECK(g.layer(0).attn.W_V.weight.shape() == Dims{16, 16});
}

TEST_CASE("head roles, ablation and predictions on a real layer's patterns") {
  const HfModel m = load_hf_model(golden("hf_gpt2_f32"));
  const std::vector<int32_t> tokens = repeated_random_tokens(m.config, 5, 1);
  REQUIRE(tokens.size() == 11);  // BOS + r + r
  CHECK(tokens[0] == 22);
  CHECK(std::vector<int32_t>(tokens.begin() + 1, tokens.begin() + 6) == std::vector<int32_t>(tokens.begin() + 6, tokens.end()));
  const HfForward run = hf_forward(m, tokens);
  const model::HeadTable table = score_hf_heads({run}, {tokens}, m.config.heads);
  REQUIRE(table.cells.size() == 8);
  for (const auto& s : table.cells) {
    CHECK(s.first >= 0);
    CHECK(s.first <= 1);
  }
  // first-token share is the mean over rows i >= 1 of alpha[i][0]
  double first = 0;
  const Tensor& a = run.alpha[1];
  for (int64_t i = 1; i < 11; ++i) first += a.f32()[(3 * 11 + i) * 11 + 0];
  CHECK(table.at(1, 3).first == Approx(first / 10).epsilon(1e-5));
  // over several repeated sequences: the same definitions, pooled
  const model::HeadTable rep = score_hf_heads_repeated(m, 5, 3, 1);
  CHECK(rep.cells.size() == 8);
  CHECK(rep.at(0, 0).induction >= 0);

  double base = 0;
  const auto rows = ablate_hf_heads(m, tokens, {}, false, &base);
  REQUIRE(rows.size() == 8);
  CHECK(base == Approx(next_token_loss(run.logits, tokens)));
  const auto both = ablate_hf_heads(m, tokens, parse_hf_heads("0.1,1.2", m.config), true);
  REQUIRE(both.size() == 1);
  CHECK(both[0].delta != 0);
  CHECK_THROWS_WITH(parse_hf_heads("2.0", m.config), Catch::Contains("outside the model"));

  const auto top = top_k(run.logits, 10, 3);
  REQUIRE(top.size() == 3);
  CHECK(top[0].prob >= top[1].prob);
  CHECK(top[1].prob >= top[2].prob);
}

TEST_CASE("tokens a model cannot take are refused") {
  const HfModel m = load_hf_model(golden("hf_gpt2_f32"));
  CHECK_THROWS_WITH(hf_forward(m, {1, 23}), Catch::Contains("outside the vocabulary (0..22)"));
  CHECK_THROWS_WITH(hf_forward(m, std::vector<int32_t>(17, 1)), Catch::Contains("longer than the model's 16 positions"));
  CHECK_THROWS_WITH(hf_forward(m, {}), Catch::Contains("no tokens"));
}

TEST_CASE("F16 and BF16 files stay mapped and each layer is widened when it runs; F32 is read at load") {
  const HfModel f32 = load_hf_model(golden("hf_llama_f32"));
  CHECK_FALSE(f32.widened_per_layer());
  CHECK(f32.layers.size() == static_cast<size_t>(f32.config.layers));
  for (const char* half : {"hf_llama_f16", "hf_gpt2_bf16"}) {
    const HfModel m = load_hf_model(golden(half));
    CHECK(m.widened_per_layer());
    CHECK(m.layers.empty());
    const HfLayer a = m.layer(1), b = m.layer(1);  // widened twice: equal values, new storage
    CHECK(a.attn.W_Q.weight.to_vector() == b.attn.W_Q.weight.to_vector());
    CHECK(a.attn.W_Q.weight.storage() != b.attn.W_Q.weight.storage());
  }
  // the prediction: float32 everything for F32; widened embeddings + one layer + the file's
  // bytes for half (GPT-2 small in F16: 435 MB against 498 MB; TinyLlama in BF16: 2.9 GB
  // against 4.4 GB; the tiny test model's embeddings dominate it, so it is not smaller)
  const HfModelBytes full = predict_hf_model_memory(golden("hf_llama_f32"));
  const int64_t half = predict_hf_model_bytes(golden("hf_llama_f16"));
  const HfConfig& c = f32.config;
  const int64_t outer = (c.vocab * c.d_model * (c.tied ? 1 : 2) + c.d_model) * 4;
  const int64_t layer = (full.params - outer) / c.layers;
  CHECK(full.params == outer + layer * c.layers);
  CHECK(predict_hf_model_bytes(golden("hf_llama_f32")) == full.total());
  CHECK(half == outer + layer + (full.params / 4) * 2);  // the F16 file holds every parameter in 2 bytes
  CHECK(predict_hf_model_memory(golden("hf_llama_f16")).packed == 0);  // half precision is never packed
}

TEST_CASE("a float32 model packs its weights once and keeps W_O and the unembedding in float32") {
  const HfModel m = load_hf_model(golden("hf_gpt2_f32"));
  const HfModelBytes predicted = predict_hf_model_memory(golden("hf_gpt2_f32"));
  CHECK(m.packed_bytes == predicted.packed);  // predicted = held
  if (!packing_available()) {
    CHECK(m.packed_bytes == 0);
    CHECK(m.layers[0].attn.W_Q.weight.defined());
    return;
  }
  const HfConfig& c = m.config;
  const int64_t d = c.d_model, ff = c.d_ff;
  const HfLayer& L = m.layers[1];
  for (const Linear* l : {&L.attn.W_Q, &L.attn.W_K, &L.attn.W_V, &L.fc, &L.proj}) {  // nothing reads these but the product
    CHECK_FALSE(l->weight.defined());
    CHECK(l->packed != nullptr);
  }
  CHECK(L.attn.W_O.weight.shape() == Dims{d, d});  // the lens reads W_O per head
  CHECK(L.attn.W_O.packed->out() == d);
  CHECK(m.unembed_packed->out() == c.vocab);
  CHECK(m.unembed.shares_storage_with(m.embed));
  CHECK(predicted.dropped == c.layers * (3 * d * d + 2 * d * ff) * 4);
  CHECK(predicted.packed >= (c.layers * (4 * d * d + 2 * d * ff) + c.vocab * d) * 4);
}
