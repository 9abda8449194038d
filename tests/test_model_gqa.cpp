// GQA in the model: kv_heads in the config and checkpoints, and the MHA -> GQA conversion
// (mean-pooled K/V heads), a converted model on the decode stack. The gradients of GQA
// models are checked in test_model_grad.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/error.h"
#include "helpers.h"
#include "model/formats/checkpoint.h"
#include "model/experiments/decode.h"
#include "model/training/gqa.h"
#include "model/training/reference.h"
#include "model/training/tasks.h"

using namespace attnsim;
using namespace attnsim::model;
namespace fs = std::filesystem;
using attnsim::test::max_abs_diff;

namespace {

// 4 query heads of dk = 4 over d = 16, biases on, one layer with LN + MLP so every kind of
// parameter is present.
ModelConfig four_heads(int64_t kv_heads = 0) {
  ModelConfig c;
  c.vocab = 13;
  c.seq_len = 9;
  c.d_model = 16;
  c.heads = 4;
  c.kv_heads = kv_heads;
  c.layers = 2;
  c.layernorm = c.mlp = true;
  c.seed = 5;
  return c;
}

Batch sample_batch() { return batch_from_tokens({{0, 3, 7, 1, 3, 7, 1, 9, 2}, {0, 12, 4, 5, 12, 4, 5, 8, 6}}); }

Tensor logits_of(const Model& m) { return forward(m, sample_batch()).logits; }

bool same_bits(const Tensor& a, const Tensor& b) { return a.shape() == b.shape() && a.to_vector() == b.to_vector(); }

// Rows [head·dk, head·dk + dk) of a (g·dk, cols) weight or (g·dk) bias.
std::vector<float> head_rows(const Tensor& t, int64_t head, int64_t dk) {
  const std::vector<float> v = t.to_vector();
  const int64_t cols = t.numel() / t.size(0);
  return {v.begin() + head * dk * cols, v.begin() + (head + 1) * dk * cols};
}

}  // namespace

TEST_CASE("gqa config: W_K and W_V are (g·dk, d); kv_heads must divide heads", "[model]") {
  const ModelConfig mha = four_heads(), gqa = four_heads(2), mqa = four_heads(1);
  const Model m = init_model(gqa);
  CHECK(m.params.get("layers.1.attn.W_K.weight").shape() == Dims{8, 16});
  CHECK(m.params.get("layers.1.attn.W_V.bias").shape() == Dims{8});
  CHECK(m.params.get("layers.1.attn.W_Q.weight").shape() == Dims{16, 16});
  // W_K and W_V each lose (d − g·dk)·(d + 1) numbers per layer
  CHECK(param_count(mha) - param_count(gqa) == 2 * 2 * (16 - 8) * 17);
  CHECK(param_count(mha) - param_count(mqa) == 2 * 2 * (16 - 4) * 17);
  // nn.Linear(d, g·dk)'s default: uniform in ±1/sqrt(d)
  for (float v : m.params.get("layers.0.attn.W_V.weight").to_vector()) CHECK(std::abs(v) <= 0.25f);
  CHECK(predict_training_bytes(mqa, 8, 9) < predict_training_bytes(mha, 8, 9));
  for (int64_t bad : {3, 8, -1}) {
    INFO(bad);
    CHECK_THROWS_WITH(validate(four_heads(bad)), Catch::Contains("does not divide heads 4"));
  }
}

TEST_CASE("gqa checkpoint: kv_heads round-trips; absent means MHA", "[model]") {
  const fs::path dir = fs::temp_directory_path() / ("attnsim-test-gqa-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const Model m = init_model(four_heads(2));
  save_checkpoint(m, dir.string());
  const Model back = load_checkpoint(dir.string());
  CHECK(back.config.kv_group_count() == 2);
  CHECK(same_bits(logits_of(back), logits_of(m)));
  // the shipped checkpoint predates kv_heads: it loads as MHA
  const Model shipped = load_checkpoint(std::string(ATTNSIM_SOURCE_DIR) + "/assets/models/induction");
  CHECK(shipped.config.kv_group_count() == shipped.config.heads);
  // a kv_heads that does not divide heads is refused, naming the file
  nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "model.json"));
  j["config"]["kv_heads"] = 3;
  std::ofstream(dir / "model.json") << j.dump();
  CHECK_THROWS_WITH(load_checkpoint(dir.string()), Catch::Contains("model.json") && Catch::Contains("kv_heads 3"));
  fs::remove_all(dir);
}

TEST_CASE("gqa convert: g = h is the identity, bit for bit", "[model]") {
  const Model m = init_model(four_heads());
  const Model same = convert_to_gqa(m, 4);
  CHECK(same.config.kv_group_count() == 4);
  REQUIRE(same.params.names == m.params.names);
  for (size_t i = 0; i < m.params.names.size(); ++i) {
    INFO(m.params.names[i]);
    CHECK(same_bits(same.params.tensors[i], m.params.tensors[i]));
    CHECK(same.params.tensors[i].f32() != m.params.tensors[i].f32());  // a copy: uptraining leaves m alone
  }
  CHECK(same_bits(logits_of(same), logits_of(m)));
}

TEST_CASE("gqa convert: each K/V head is its group's mean; W_Q, W_O and the rest are kept", "[model]") {
  const Model m = init_model(four_heads());
  const Model g2 = convert_to_gqa(m, 2);
  CHECK(g2.config.kv_heads == 2);
  for (const char* name : {"layers.0.attn.W_K.weight", "layers.1.attn.W_V.bias"}) {
    INFO(name);
    const Tensor& before = m.params.get(name);
    const Tensor& after = g2.params.get(name);
    REQUIRE(after.size(0) == 8);
    for (int64_t j = 0; j < 2; ++j) {
      const auto a = head_rows(before, 2 * j, 4), b = head_rows(before, 2 * j + 1, 4), mean = head_rows(after, j, 4);
      for (size_t e = 0; e < mean.size(); ++e) CHECK(mean[e] == static_cast<float>((double(a[e]) + b[e]) / 2));
    }
  }
  for (size_t i = 0; i < m.params.names.size(); ++i)
    if (m.params.names[i].find("W_K") == std::string::npos && m.params.names[i].find("W_V") == std::string::npos) {
      INFO(m.params.names[i]);
      CHECK(same_bits(g2.params.tensors[i], m.params.tensors[i]));
    }
  // a GQA model converts further along the same groups: 4 -> 2 -> 1 equals 4 -> 1
  CHECK(same_bits(convert_to_gqa(g2, 1).params.get("layers.0.attn.W_K.weight"),
                  convert_to_gqa(m, 1).params.get("layers.0.attn.W_K.weight")));
  CHECK_FALSE(same_bits(logits_of(g2), logits_of(m)));
}

TEST_CASE("gqa convert: heads that already agree within each group keep the logits exactly", "[model]") {
  for (int64_t g : {2, 1}) {
    Model m = init_model(four_heads());
    const int64_t s = 4 / g, dk = 4;
    // copy the first head of each group over the others, in W_K, W_V and their biases
    for (size_t i = 0; i < m.params.names.size(); ++i) {
      const std::string& n = m.params.names[i];
      if (n.find("W_K") == std::string::npos && n.find("W_V") == std::string::npos) continue;
      Tensor& t = m.params.tensors[i];
      const int64_t block = dk * (t.numel() / t.size(0));
      for (int64_t head = 0; head < 4; ++head)
        std::copy_n(t.f32() + (head / s * s) * block, block, t.f32() + head * block);
    }
    const Model converted = convert_to_gqa(m, g);
    INFO("g = " << g);
    // the plain-loop reference sums every dot product in the same order for any g: bit for bit
    const Batch b = sample_batch();
    CHECK(reference_loss_and_grads(converted.config, params_as<float>(converted.params), b).logits ==
          reference_loss_and_grads(m.config, params_as<float>(m.params), b).logits);
    // the fast path runs other BLAS shapes (k_proj is (B,T,g·dk), the grouped scores kernel):
    // equal to float rounding (2.4e-7 measured)
    CHECK(max_abs_diff(logits_of(converted), logits_of(m)) < 2e-6);
  }
}

TEST_CASE("gqa convert: a g that does not divide the K/V heads is refused", "[model]") {
  const Model m = init_model(four_heads());
  for (int64_t bad : {0, 3, 8, -2}) {
    INFO(bad);
    CHECK_THROWS_WITH(convert_to_gqa(m, bad), Catch::Contains("must divide the model's 4 key/value heads"));
  }
  CHECK_THROWS_AS(convert_to_gqa(convert_to_gqa(m, 2), 4), Error);  // cannot un-share heads
}

TEST_CASE("gqa model on the decode stack: token by token gives the training forward's loss", "[model]") {
  const Model shipped = load_checkpoint(std::string(ATTNSIM_SOURCE_DIR) + "/assets/models/induction");
  TaskSpec spec;
  spec.len = shipped.config.seq_len;
  const Batch b = make_batch(spec, 4, 99, 0);
  for (int64_t g : {2, 1}) {
    const Model m = convert_to_gqa(shipped, g);
    const PositionLoss decoded = loss_by_position(m, b, CachePolicy{});
    const LossStats forward_loss = cross_entropy(forward(m, b).logits, b);
    INFO("g = " << g);
    REQUIRE(forward_loss.parts[kRepeat].count > 0);
    // float32 through different summation orders (cached keys vs one causal pass)
    CHECK(decoded.repeat_loss == Approx(forward_loss.parts[kRepeat].loss()).margin(1e-4));
  }
}
