// attnsim-cli on Hugging Face folders: the interface issue 23's tests rely on.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/npy.h"
#include "helpers.h"

using namespace attnsim;
using test::run_cli;
namespace fs = std::filesystem;

namespace {

std::string golden(const std::string& name) { return std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/" + name; }

}  // namespace

TEST_CASE("trace --model HF --layer L --tokens --dump writes that layer's steps, alpha (1,h,T,T)") {
  const fs::path dir = fs::temp_directory_path() / ("attnsim-hf-trace-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const auto r = run_cli("trace --model " + golden("hf_llama_f16") + " --layer 1 --tokens 3,4,25,2,22,1,5 --dump " + dir.string());
  REQUIRE(r.code == 0);
  const Tensor alpha = read_npy((dir / "alpha.npy").string());
  CHECK(alpha.shape() == Dims{1, 4, 7, 7});
  CHECK(test::max_abs_diff(alpha, read_npy(golden("hf_llama_f16/alpha_1.npy"))) < 1e-4);
  CHECK(read_npy((dir / "q_rot.npy").string()).shape() == Dims{1, 4, 7, 4});
  CHECK(read_npy((dir / "k_rot.npy").string()).shape() == Dims{1, 2, 7, 4});
  CHECK(fs::exists(dir / "k_grouped.npy"));
  fs::remove_all(dir);
  // GPT-2 has no RoPE: q_rot is listed, skipped, not dumped
  const auto g = run_cli("trace --model " + golden("hf_gpt2_f32") + " --layer 0 --tokens 1,2,3 --json");
  REQUIRE(g.code == 0);
  const nlohmann::json j = nlohmann::json::parse(g.output);
  CHECK(j["steps"][12]["name"] == "q_rot");
  CHECK(j["steps"][12]["kind"] == "skipped");
}

TEST_CASE("decode --model HF --tokens --steps N --json lists the generated ids (greedy, KV cache)") {
  const auto r = run_cli("decode --model " + golden("hf_qwen2_bf16") + " --tokens 7,3,16,16,17,0,8 --steps 5 --json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.output);
  std::vector<int> want;
  for (float v : read_npy(golden("hf_qwen2_bf16/greedy.npy")).to_vector()) want.push_back(static_cast<int>(v));
  CHECK(j["generated"].get<std::vector<int>>() == want);
  CHECK(j["steps"].size() == 5);  // the prefill, then one call per token
  CHECK(j["steps"][1]["k_cache_shape"] == std::vector<int>{1, 1, 8, 4});  // Qwen2 tiny: one K/V head
  // --dump: every call's trace per layer; the decode step rotates its one new row at position 8
  const fs::path dir = fs::temp_directory_path() / ("attnsim-hf-decode-" + std::to_string(getpid()));
  fs::remove_all(dir);
  REQUIRE(run_cli("decode --model " + golden("hf_llama_f32") + " --tokens 3,4,25,2,22,1,5,9 --steps 2 --dump " + dir.string()).code == 0);
  CHECK(read_npy((dir / "step_0001" / "layer_1" / "k_cache.npy").string()).shape() == Dims{1, 2, 9, 4});
  std::ifstream in(dir / "step_0001" / "layer_0" / "trace.json");
  const nlohmann::json t = nlohmann::json::parse(in);
  CHECK(t["config"]["position0"] == 8);
  fs::remove_all(dir);
  // sampled at a temperature: seeded, so the same seed gives the same ids
  const std::string hot = "decode --model " + golden("hf_gpt2_f32") + " --tokens 1,2 --steps 6 --temperature 1.5 --seed 3 --json";
  CHECK(nlohmann::json::parse(run_cli(hot).output)["generated"] == nlohmann::json::parse(run_cli(hot).output)["generated"]);
}

TEST_CASE("text input (--text) goes through the folder's tokenizer: the same run as its ids") {
  const std::string m = golden("hf_gpt2_tok");
  const auto ids = run_cli("tokenize --model " + m + " --text 'the cat sat' --json");
  REQUIRE(ids.code == 0);
  std::string list;
  for (int id : nlohmann::json::parse(ids.output)["ids"].get<std::vector<int>>()) list += (list.empty() ? "" : ",") + std::to_string(id);
  const auto by_text = run_cli("trace --model " + m + " --layer 1 --text 'the cat sat' --json");
  const auto by_ids = run_cli("trace --model " + m + " --layer 1 --tokens " + list + " --json");
  REQUIRE(by_text.code == 0);
  CHECK(by_text.output == by_ids.output);
  const auto dec = run_cli("decode --model " + m + " --text 'the cat' --steps 3 --json");
  REQUIRE(dec.code == 0);
  CHECK(nlohmann::json::parse(dec.output)["text"].get<std::string>().rfind("the cat", 0) == 0);
  const auto top = run_cli("predict --model " + m + " --text 'the cat' --top-k 2 --json");
  REQUIRE(top.code == 0);
  CHECK(nlohmann::json::parse(top.output)["top"].size() == 2);
}

TEST_CASE("heads and ablate on a Hugging Face folder") {
  const auto h = run_cli("heads --model " + golden("hf_gpt2_f32") + " --tokens 3,1,4,1,5 --json");
  REQUIRE(h.code == 0);
  const nlohmann::json j = nlohmann::json::parse(h.output);
  CHECK(j["tokens"]["heads"].size() == 8);
  CHECK(j["repeated"]["heads"].size() == 8);
  const auto a = run_cli("ablate --model " + golden("hf_llama_f32") + " --tokens 3,4,25,2,22 --heads 1.0 --json");
  REQUIRE(a.code == 0);
  const nlohmann::json k = nlohmann::json::parse(a.output);
  CHECK(k["ablated"][0]["heads"] == "1.0");
  CHECK(k["ablated"][0]["loss"].get<double>() == Approx(k["base_loss"].get<double>() + k["ablated"][0]["delta"].get<double>()));
}

TEST_CASE("a config vocabulary larger than the tokenizer's is valid: ids past it print as <id N> (issue 37)", "[cli]") {
  // hf_gpt2_padded: 300 embedding rows, 270 tokens; greedy after "Hi" picks 285 (make_hf_golden.py)
  const auto table = run_cli("decode --model " + golden("hf_gpt2_padded") + " --text Hi --steps 2");
  REQUIRE(table.code == 0);
  CHECK(table.output.find("<id 285>") != std::string::npos);
  const auto j = run_cli("decode --model " + golden("hf_gpt2_padded") + " --text Hi --steps 2 --json");
  REQUIRE(j.code == 0);
  const auto out = nlohmann::json::parse(j.output);
  CHECK(out["generated"][0] == 285);
  CHECK(out["text"].get<std::string>().rfind("Hi<id 285>", 0) == 0);
  const auto p = run_cli("predict --model " + golden("hf_gpt2_padded") + " --text Hi --top-k 3 --json");
  REQUIRE(p.code == 0);
  CHECK(nlohmann::json::parse(p.output)["top"][0]["label"] == "<id 285>");
}

TEST_CASE("bench-model --decode N times N greedy tokens through the KV caches; past the positions it is refused") {
  const auto r = run_cli("bench-model --model " + golden("hf_gpt2_tok") + " --length 4 --repeats 2 --decode 6 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j["tokens"] == 4);
  CHECK(j["decode_tokens_per_s"].get<double>() > 0.0);
  const auto past = run_cli("bench-model --model " + golden("hf_gpt2_tok") + " --length 4 --decode 13");  // 16 positions
  CHECK(past.code == 2);
  CHECK_THAT(past.output, Catch::Contains("longer than the model's 16 positions"));
}
