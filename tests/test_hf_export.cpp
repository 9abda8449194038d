// A checkpoint of GPT-2's or Llama's form written as a Hugging Face folder
// (src/model/formats/hf_export.h): attnsim's Hugging Face loader opens it and gives the native
// model's logits to 1e-5, and a by-hand PyTorch Llama forward of the same folder
// (tests/golden/make_llama_export_golden.py) gives the same.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "engine/error.h"
#include "engine/half.h"
#include "engine/npy.h"
#include "helpers.h"
#include "model/formats/checkpoint.h"
#include "model/formats/hf_export.h"
#include "model/pass/hf_forward.h"
#include "model/training/backward.h"
#include "model/formats/hf_model.h"
#include "model/pass/forward.h"
#include "model/training/tasks.h"

using namespace attnsim;
using namespace attnsim::model;
namespace fs = std::filesystem;

namespace {

ModelConfig gpt2_form() {
  ModelConfig c;
  c.vocab = 40;
  c.seq_len = 12;
  c.d_model = 16;
  c.heads = 4;
  c.layers = 2;
  c.layernorm = c.mlp = c.tied = true;
  c.seed = 5;
  return c;
}

// GPT-2's initialisation gives near-uniform logits; spread the weights so the comparison sees
// logits of a trained model's size (up to about 7 here; every parameter moved, LayerNorm away
// from 1 / 0).
Model spread(Model m) {
  for (size_t i = 0; i < m.params.names.size(); ++i) {
    float* p = m.params.tensors[i].f32();
    for (int64_t k = 0; k < m.params.tensors[i].numel(); ++k) p[k] = p[k] * 5.0f + 0.05f * std::sin(static_cast<float>(k + i));
  }
  return m;
}

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("attnsim-export-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

}  // namespace

TEST_CASE("a GPT-2-form checkpoint exported to Hugging Face gives the same logits through the HF loader", "[model]") {
  const Model m = spread(init_model(gpt2_form()));
  const fs::path d = scratch("logits");
  hf::export_hf(m, d.string(), "", false);
  const hf::HfModel h = hf::load_hf_model(d.string());
  CHECK(h.config.family == hf::Family::Gpt2);
  CHECK(h.config.tied);
  const std::vector<int32_t> ids{0, 7, 3, 39, 12, 7, 3, 5, 1, 0, 22, 31};
  const Tensor hf_logits = hf::hf_forward(h, ids).logits;  // (T,V)
  const Batch b = batch_from_tokens({ids});
  const Tensor native = forward(m, b).logits.view({12, 40});
  CHECK(test::max_abs_diff(hf_logits, native) < 1e-5);
  double spread_of_logits = 0;
  for (float v : native.to_vector()) spread_of_logits = std::max(spread_of_logits, std::abs(static_cast<double>(v)));
  CHECK(spread_of_logits > 1.0);  // the comparison is on real values, not near-zero ones
  fs::remove_all(d);
}

TEST_CASE("an F16 export holds each weight rounded to the nearest half, in half the bytes", "[model]") {
  const Model m = spread(init_model(gpt2_form()));
  const fs::path d32 = scratch("f32"), d16 = scratch("f16");
  hf::export_hf(m, d32.string(), "", false);
  hf::export_hf(m, d16.string(), "", false, true);
  CHECK(fs::file_size(d16 / "model.safetensors") < fs::file_size(d32 / "model.safetensors") * 0.6);  // the header is the same
  const hf::HfModel h = hf::load_hf_model(d16.string());
  // every weight read back is exactly the half nearest the checkpoint's float
  const Tensor& wte = h.embed;
  const float* native = m.params.get("embed.weight").f32();
  int64_t exact = 0;
  for (int64_t i = 0; i < wte.numel(); ++i) exact += wte.f32()[i] == round_to_half(native[i]);
  CHECK(exact == wte.numel());
  const std::vector<int32_t> ids{0, 7, 3, 39, 12, 7, 3, 5};
  const Tensor l16 = hf::hf_forward(h, ids).logits;
  const Tensor l32 = hf::hf_forward(hf::load_hf_model(d32.string()), ids).logits;
  const double diff = test::max_abs_diff(l16, l32);
  CHECK(diff > 0);     // the halves are not the floats
  CHECK(diff < 0.05);  // but close: ~2^-11 relative per weight
  fs::remove_all(d32);
  fs::remove_all(d16);
}

ModelConfig llama_form() {
  ModelConfig c;
  c.vocab = 40;
  c.seq_len = 12;
  c.d_model = 16;
  c.heads = 4;
  c.kv_heads = 2;
  c.layers = 2;
  c.rmsnorm = c.mlp = c.swiglu = true;
  c.bias = false;
  c.rope_theta = 100;
  c.seed = 6;
  return c;
}

TEST_CASE("a Llama-form checkpoint exported to Hugging Face opens as Llama with the same logits, tied or not", "[model]") {
  for (bool tied : {false, true}) {
    ModelConfig c = llama_form();
    c.tied = tied;
    const Model m = spread(init_model(c));
    const fs::path d = scratch("llama");
    hf::export_hf(m, d.string(), "", false);
    const hf::HfModel h = hf::load_hf_model(d.string());
    INFO("tied " << tied);
    CHECK(h.config.family == hf::Family::Llama);
    CHECK(h.config.tied == tied);
    CHECK(h.config.kv_heads == 2);
    CHECK(h.config.d_ff == c.mlp_dim());
    const std::vector<int32_t> ids{0, 7, 3, 39, 12, 7, 3, 5, 1, 0, 22, 31};
    const Tensor hf_logits = hf::hf_forward(h, ids).logits;  // (T,V)
    const Tensor native = forward(m, batch_from_tokens({ids})).logits.view({12, 40});
    CHECK(test::max_abs_diff(hf_logits, native) < 1e-5);
    double spread_of_logits = 0;
    for (float v : native.to_vector()) spread_of_logits = std::max(spread_of_logits, std::abs(static_cast<double>(v)));
    CHECK(spread_of_logits > 1.0);
    fs::remove_all(d);
  }
}

TEST_CASE("the Llama folder of the golden checkpoint gives PyTorch's by-hand Llama forward's logits", "[model]") {
  const std::string dir = std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/model_llama";
  const Model m = load_checkpoint(dir + "/params");
  const fs::path d = scratch("llama-golden");
  hf::export_hf(m, d.string(), "", false);
  std::vector<int32_t> ids;
  for (float v : read_npy(dir + "/export_tokens.npy").to_vector()) ids.push_back(static_cast<int32_t>(v));
  const Tensor want = read_npy(dir + "/export_logits.npy");  // (T,V), torch's forward of the folder
  const Tensor got = hf::hf_forward(hf::load_hf_model(d.string()), ids).logits;
  CHECK(got.shape() == want.shape());
  CHECK(test::max_abs_diff(got, want) < 1e-5);
  fs::remove_all(d);
}

TEST_CASE("only GPT-2's and Llama's forms export; the folder is whole or absent", "[model]") {
  ModelConfig c = gpt2_form();
  c.tied = false;
  const fs::path d = scratch("refused");
  CHECK_THROWS_WITH(hf::export_hf(init_model(c), d.string(), "", false), Catch::Contains("lacks a tied unembedding"));
  c = gpt2_form();
  c.layernorm = false;
  c.kv_heads = 2;
  CHECK_THROWS_WITH(hf::export_hf(init_model(c), d.string(), "", false),
                    Catch::Contains("lacks LayerNorm, one K/V head per head"));
  c = llama_form();
  c.rope_theta = 0;
  c.bias = true;
  CHECK_THROWS_WITH(hf::export_hf(init_model(c), d.string(), "", false),
                    Catch::Contains("Llama's form; this checkpoint lacks rotary positions, linear maps without biases"));
  CHECK_FALSE(fs::exists(d));
  // a tokenizer larger than the model's vocabulary is refused before anything is written
  CHECK_THROWS_WITH(hf::export_hf(init_model(gpt2_form()), d.string(), std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/tokenizers/gpt2", false),
                    Catch::Contains("the tokenizer has 270 tokens, the model 40"));
  CHECK_FALSE(fs::exists(d));
}

TEST_CASE("a tied checkpoint saves and loads with its flag, and its model.json says tied", "[model]") {
  const Model m = init_model(gpt2_form());
  CHECK(m.params.find("unembed.weight") == nullptr);
  const fs::path d = scratch("ckpt");
  save_checkpoint(m, d.string(), {});
  const Model back = load_checkpoint(d.string());
  CHECK(back.config.tied);
  CHECK(back.params.names == m.params.names);
  fs::remove_all(d);
}

TEST_CASE("train --torch-init keeps torch.nn's N(0, 1) embeddings for Llama's form, and the checkpoint says so", "[model]") {
  auto embed_sd = [](const Model& m) {
    const std::vector<float> v = m.params.get("embed.weight").to_vector();
    double sq = 0;
    for (float x : v) sq += static_cast<double>(x) * x;
    return std::sqrt(sq / static_cast<double>(v.size()));
  };
  ModelConfig c = llama_form();
  c.tied = true;
  CHECK(embed_sd(init_model(c)) == Approx(0.02).epsilon(0.1));  // GPT-2's initialisation
  c.torch_init = true;
  const Model m = init_model(c);
  CHECK(embed_sd(m) == Approx(1.0).epsilon(0.1));                // torch.nn.Embedding's
  const fs::path d = scratch("torch-init");
  save_checkpoint(m, d.string(), {});
  CHECK(load_checkpoint(d.string()).config.torch_init);
  fs::remove_all(d);
}
