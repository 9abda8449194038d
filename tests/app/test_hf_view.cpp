// HfView (views/hf_view.h) on the tiny Hugging Face folders of tests/golden: what the app shows
// is what src/model computes, exactly.
//   - every layer's alpha on screen is hf_forward's
//   - the loss change with heads knocked out is ablate_hf_heads'
//   - greedy decode is the golden greedy continuation (PyTorch's)
//   - tokens carry their byte ranges; a split UTF-8 byte reads <0xED>
//   - a bad folder, bad text or a bad setting throws one line and changes nothing
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/error.h"
#include "engine/npy.h"
#include "model/experiments/hf_eval.h"
#include "model/pass/hf_forward.h"
#include "views/hf_view.h"

using namespace attnsim;
using namespace attnsim::app;

namespace {

std::string golden(const std::string& name) { return std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/" + name; }

std::vector<int32_t> ids_of(const Tensor& t) {
  std::vector<int32_t> out;
  for (float v : t.to_vector()) out.push_back(static_cast<int32_t>(v));
  return out;
}

// The golden folder opened at its reference tokens, the first run landed.
void open_at_tokens(HfView& v, const std::string& dir) {
  v.load(dir);
  v.set_tokens(ids_of(read_npy(dir + "/tokens.npy")));
  v.wait();
  REQUIRE(v.error().empty());
}

}  // namespace

TEST_CASE("HfView: each layer on screen has hf_forward's alpha exactly, RoPE's steps in the Llama family") {
  const auto name = GENERATE(as<std::string>{}, "hf_gpt2_f32", "hf_llama_f32", "hf_qwen2_bf16");
  INFO(name);
  HfView v;
  open_at_tokens(v, golden(name));
  const model::hf::HfForward ref = model::hf::hf_forward(v.model(), v.token_ids());
  for (int64_t l = 0; l < v.config().layers; ++l) {
    INFO("layer " << l);
    v.set_layer(l);
    v.wait();
    const auto data = v.run_data();
    REQUIRE(data);
    REQUIRE(v.run()->layer == l);
    CHECK(data->run.trace.at("alpha").out.to_vector() == ref.alpha[static_cast<size_t>(l)].to_vector());
    CHECK(data->run.trace.at("q_rot").skipped() == (v.config().family == model::hf::Family::Gpt2));
    CHECK(data->q_tokens.at(0).size() == v.tokens().size());
  }
  // the top-5 and the loss are the model's
  const auto top = model::hf::top_k(ref.logits, static_cast<int64_t>(v.tokens().size()) - 1, 5);
  REQUIRE(v.run()->top.size() == 5);
  for (size_t i = 0; i < top.size(); ++i) CHECK(v.run()->top[i].token == top[i].token);
  CHECK(v.run()->loss == model::hf::next_token_loss(ref.logits, v.token_ids()));
  CHECK(v.run()->repeated->layers == v.config().layers);
  CHECK(v.run()->own.heads == v.config().heads);
}

TEST_CASE("HfView: knocking heads out changes the loss by ablate_hf_heads' delta") {
  const auto name = GENERATE(as<std::string>{}, "hf_gpt2_f32", "hf_llama_f32");
  INFO(name);
  HfView v;
  open_at_tokens(v, golden(name));
  const std::vector<model::HeadRef> heads{{1, 2}, {0, 3}};
  v.set_ablated(heads);
  v.wait();
  double base = 0;
  const auto rows = model::hf::ablate_hf_heads(v.model(), v.token_ids(), heads, false, &base);
  REQUIRE(rows.size() == 1);
  CHECK(v.run()->loss == base);
  CHECK(v.run()->delta() == rows[0].delta);
  CHECK(v.run()->delta() != 0);
  CHECK(v.run()->top_ablated.size() == 5);
  // the layer on screen is the ablated pass's: head 3 of layer 0 has a zero ctx
  v.set_layer(0);
  v.wait();
  const Tensor ctx = v.run_data()->run.trace.at("ctx_heads").out.contiguous();  // (1,h,T,dk)
  const int64_t T = ctx.size(2), dk = ctx.size(3);
  double sum = 0;
  for (int64_t i = 0; i < T * dk; ++i) sum += std::fabs(ctx.f32()[3 * T * dk + i]);
  CHECK(sum == 0);
  // toggling one head back leaves the other
  v.toggle({0, 3});
  v.wait();
  REQUIRE(v.ablated_heads() == std::vector<model::HeadRef>{{1, 2}});
  CHECK(v.run()->ablated == std::vector<model::HeadRef>{{1, 2}});
}

TEST_CASE("HfView: greedy decode is the golden greedy continuation; a temperature draw is seeded") {
  const auto name = GENERATE(as<std::string>{}, "hf_gpt2_f32", "hf_llama_f32", "hf_qwen2_f32");
  INFO(name);
  const std::string dir = golden(name);
  HfView v;
  open_at_tokens(v, dir);
  const std::vector<int32_t> expected = ids_of(read_npy(dir + "/greedy.npy"));
  v.decode(static_cast<int64_t>(expected.size()), 0, 1);
  v.wait();
  REQUIRE(v.decoded());
  CHECK(v.decoded()->generated == expected);
  v.decode(4, 0.8, 7);
  v.wait();
  const auto first = v.decoded()->generated;
  v.decode(4, 0.8, 7);
  v.wait();
  CHECK(v.decoded()->generated == first);
  CHECK_THROWS_AS(v.decode(0, 0, 1), Error);
  CHECK_THROWS_AS(v.decode(1000, 0, 1), Error);
  CHECK_THROWS_AS(v.decode(2, -1, 1), Error);
}

TEST_CASE("HfView: the user's text as tokens with byte ranges; a split UTF-8 byte reads <0xED>") {
  HfView v;
  v.load(golden("hf_gpt2_tok"));
  REQUIRE(v.has_tokenizer());
  const std::string text = "hi 한";  // 한 = ED 95 9C: the tiny vocabulary has no merge for it
  v.set_text(text);
  v.wait();
  REQUIRE(v.error().empty());
  const auto& toks = v.tokens();
  REQUIRE(toks.size() >= 3);
  size_t at = 0;
  bool split_byte = false;
  for (const HfToken& t : toks) {
    CHECK(t.span.begin == at);  // in order, covering the text
    at = t.span.end;
    split_byte |= t.label == "<0xED>";
  }
  CHECK(at == text.size());
  CHECK(split_byte);
  CHECK(v.text() == text);
  CHECK(v.run()->tokens == v.token_ids());
}

TEST_CASE("HfView: a bad folder, bad text or a bad setting is one line and leaves the view as it was") {
  HfView v;
  open_at_tokens(v, golden("hf_gpt2_f32"));
  v.set_layer(1);
  v.wait();
  const auto run = v.run();
  const std::string dir = v.dir();
  const auto tokens = v.token_ids();

  const std::filesystem::path bad = std::filesystem::temp_directory_path() / "attnsim-hf-view-bad";
  std::filesystem::remove_all(bad);
  std::filesystem::create_directories(bad);
  std::filesystem::copy(golden("hf_gpt2_f32") + "/model.safetensors", bad / "model.safetensors");
  std::ofstream(bad / "config.json") << R"({"model_type": "gpt2", "n_embd": 16, "n_head": 0)";
  auto one_line_error = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.find('\n') == std::string::npos);
      return what;
    }
    FAIL("no error");
    return std::string();
  };
  CHECK(one_line_error([&] { v.load(bad.string()); }).find("config.json") != std::string::npos);
  CHECK(one_line_error([&] { v.load(golden("no_such_folder")); }) != "");
  // memory: refused with the figures
  CHECK(one_line_error([&] { v.load(golden("hf_gpt2_f32"), 1024); }).find("needs about") != std::string::npos);
  CHECK(one_line_error([&] { v.set_text("hello"); }).find("tokenizer") != std::string::npos);  // this folder has none
  CHECK(one_line_error([&] { v.set_tokens({1, 2, 999}); }) != "");
  CHECK(one_line_error([&] { v.set_tokens(std::vector<int32_t>(100, 1)); }) != "");
  CHECK(one_line_error([&] { v.set_layer(9); }).find("2 layers") != std::string::npos);
  CHECK(one_line_error([&] { v.set_ablated({{0, 7}}); }) != "");
  v.wait();
  CHECK(v.dir() == dir);
  CHECK(v.token_ids() == tokens);
  CHECK(v.layer() == 1);
  CHECK(v.ablated_heads().empty());
  CHECK(v.run() == run);
  std::filesystem::remove_all(bad);
}
