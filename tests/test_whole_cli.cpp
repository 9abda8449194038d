// attnsim-cli's whole-pass interface (issue 40): trace --whole --dump, decode's sampling
// options, lens, and their one-line refusals.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/npy.h"
#include "helpers.h"

using namespace attnsim;
using test::run_cli;
namespace fs = std::filesystem;

namespace {

std::string golden(const std::string& name) { return std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/" + name; }

fs::path scratch(const std::string& what) {
  const fs::path p = fs::temp_directory_path() / ("attnsim-" + what + "-" + std::to_string(getpid()));
  fs::remove_all(p);
  return p;
}

std::vector<int> generated(const std::string& args) {
  const auto r = run_cli(args);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.output)["generated"].get<std::vector<int>>();
}

}  // namespace

TEST_CASE("trace --whole --dump writes OUT/<step>.npy and OUT/layer_<L>/<step>.npy, PyTorch's values") {
  const fs::path out = scratch("whole");
  const std::string m = golden("hf_qwen2_f32");
  const auto r = run_cli("trace --model " + m + " --tokens 7,3,16,16,17,0,8 --whole --temperature 0.8 --top-k 5 --top-p 0.9 --dump " +
                         out.string());
  REQUIRE(r.code == 0);
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(m + "/whole")) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = fs::relative(e.path(), m + "/whole");
    INFO(rel);
    CHECK(test::max_abs_diff(read_npy((out / rel).string()), read_npy(e.path().string())) < 1e-4);
    ++files;
  }
  CHECK(files == 25);
  CHECK(read_npy((out / "layer_1" / "alpha.npy").string()).shape() == Dims{1, 4, 7, 7});
  CHECK(read_npy((out / "next_token.npy").string()).shape() == Dims{1, 1});
  CHECK_FALSE(fs::exists(out / "pos_embed.npy"));  // RoPE: listed, skipped, not written
  fs::remove_all(out);

  // the toy checkpoint: attention only, so the norms and the MLP are listed and skipped
  const auto toy = run_cli("trace --model " + std::string(ATTNSIM_SOURCE_DIR) + "/assets/models/induction --whole --tokens 0,1,2,3 --dump " +
                           out.string());
  REQUIRE(toy.code == 0);
  CHECK(read_npy((out / "layer_1" / "resid_attn.npy").string()).shape() == Dims{1, 4, 128});
  CHECK(read_npy((out / "logits.npy").string()).shape() == Dims{1, 4, 65});
  CHECK_FALSE(fs::exists(out / "layer_0" / "mlp_up.npy"));
  CHECK(fs::exists(out / "trace.json"));
  fs::remove_all(out);
}

TEST_CASE("decode's sampling: temperature to 0 is greedy, top-k V and top-p 1 change nothing, a seed repeats") {
  const std::string base = "decode --model " + golden("hf_gpt2_f32") + " --tokens 1,2,3 --steps 6 --json";
  CHECK(generated(base + " --temperature 1e-7 --seed 5") == generated(base));
  const std::vector<int> hot = generated(base + " --temperature 1.5 --seed 3");
  CHECK(generated(base + " --temperature 1.5 --seed 3 --top-k 23 --top-p 1") == hot);
  CHECK(generated(base + " --temperature 1.5 --seed 3 --top-k 2 --top-p 0.7") ==
        generated(base + " --temperature 1.5 --seed 3 --top-k 2 --top-p 0.7"));
  // top-k 1 is greedy at any temperature
  CHECK(generated(base + " --temperature 5 --seed 9 --top-k 1") == generated(base));
  const auto j = nlohmann::json::parse(run_cli(base + " --temperature 1.5 --top-k 4").output);
  CHECK(j["config"]["top_k"] == 4);
}

TEST_CASE("lens --json: the logit lens per block and the attribution parts summing to the logit") {
  const auto r = run_cli("lens --model " + golden("hf_gpt2_f32") + " --tokens 5,1,7,2 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j["lens"].size() == 3);  // embed, layer_0, layer_1
  CHECK(j["lens"][2]["top"] == j["target"]);
  CHECK(j["attribution"]["parts"].size() == 2 + 2 * (4 + 2) + 1);
  CHECK(j["attribution"]["sum"].get<double>() == Approx(j["attribution"]["logit"].get<double>()).margin(1e-4));
  const auto toy = run_cli("lens --model " + std::string(ATTNSIM_SOURCE_DIR) + "/assets/models/induction --text qwertyqwer --json");
  REQUIRE(toy.code == 0);
  CHECK(nlohmann::json::parse(toy.output)["target_label"] == "\"t\"");  // the induction model continues the repeat
}

TEST_CASE("bad sampling options and a whole dump that would not fit: one line, exit 2, nothing written") {
  const std::string g = "--model " + golden("hf_gpt2_f32") + " --tokens 1,2";
  const fs::path out = scratch("whole-bad");
  for (const std::string& bad :
       {"decode " + g + " --temperature nan", "decode " + g + " --temperature -1", "decode " + g + " --temperature 1e308",
        "decode " + g + " --top-k 0", "decode " + g + " --top-k 24", "decode " + g + " --top-p 0",
        "decode " + g + " --top-p 1.5", "trace " + g + " --whole --mem-limit 2K --dump " + out.string()}) {
    INFO(bad);
    const auto r = run_cli(bad);
    CHECK(r.code == 2);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
  CHECK(run_cli("decode " + g + " --temperature 1e308").output.find("overflows float32") != std::string::npos);
  CHECK(run_cli("decode --help").output.find("0 means greedy") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}
