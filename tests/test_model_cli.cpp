// attnsim-cli train / heads / ablate / trace --model / gqa-convert, as a user runs them.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "helpers.h"

using attnsim::test::run_cli;
namespace fs = std::filesystem;

namespace {

int count_lines(const std::string& s) {
  int n = 0;
  for (char ch : s) n += ch == '\n';
  return n;
}

// One tiny trained checkpoint shared by the tests below.
const fs::path& tiny_checkpoint() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("attnsim-cli-model-" + std::to_string(getpid()));
    fs::remove_all(d);
    const auto r = run_cli("train --vocab 17 --seq 12 --d-model 16 --heads 2 --min-repeat 3 --max-repeat 5 --batch 8 "
                           "--steps 20 --checkpoint-every 10 --score-every 10 --out " + d.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    return d;
  }();
  return dir;
}

}  // namespace

TEST_CASE("cli train: writes the final model, step checkpoints and a JSON-lines log", "[model][cli]") {
  const fs::path& d = tiny_checkpoint();
  CHECK(fs::exists(d / "model.json"));
  CHECK(fs::exists(d / "layers.1.attn.W_O.weight.npy"));
  CHECK(fs::exists(d / "checkpoints/step-000010/model.json"));
  CHECK(fs::exists(d / "checkpoints/step-000020/embed.weight.npy"));
  std::ifstream log(d / "train_log.jsonl");
  std::string line, last;
  int lines = 0;
  while (std::getline(log, line)) ++lines, last = line;
  CHECK(lines >= 3);
  CHECK(last.find("\"step\":20") != std::string::npos);
  CHECK(last.find("\"induction\"") != std::string::npos);
}

TEST_CASE("cli heads / ablate / trace --model run on a checkpoint", "[model][cli]") {
  const std::string d = tiny_checkpoint().string();
  const auto heads = run_cli("heads --model " + d + " --json");
  REQUIRE(heads.code == 0);
  CHECK(heads.output.find("\"induction_mul\"") != std::string::npos);
  const auto ab = run_cli("ablate --model " + d + " --heads 1.0 --mode mean");
  REQUIRE(ab.code == 0);
  CHECK(ab.output.find("1.0") != std::string::npos);
  const auto tr = run_cli("trace --model " + d + " --layer 1 --text abcabc");
  INFO(tr.output);
  REQUIRE(tr.code == 0);
  CHECK(tr.output.find("ctx_contiguous") != std::string::npos);
  CHECK(tr.output.find("(1, 2, 7, 7)") != std::string::npos);  // scores of BOS + 6 characters
}

TEST_CASE("cli: bad model input is one line and exit 2", "[model][cli]") {
  const std::string d = tiny_checkpoint().string();
  for (const std::string& args :
       std::vector<std::string>{"heads --model /nonexistent/ckpt", "ablate --model " + d + " --heads 9.9", "ablate --model " + d + " --heads x",
        "ablate --model " + d + " --mode half", "trace --model " + d + " --layer 5",
        "trace --model " + d + " --text 한국어", "train --heads 3 --d-model 64 --steps 1",
        "train --task bogus --steps 1", "train --max-repeat 40 --steps 1", "experiment nope"}) {
    const auto r = run_cli(args);
    INFO(args << " -> " << r.output);
    CHECK(r.code == 2);
    CHECK(count_lines(r.output) == 1);
  }
}

namespace {

// 4 query heads of d_k = 4, so g = 2 (GQA) and g = 1 (MQA) both exist.
const fs::path& four_head_checkpoint() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("attnsim-cli-gqa-" + std::to_string(getpid()));
    fs::remove_all(d);
    const auto r = run_cli("train --vocab 17 --seq 12 --d-model 16 --heads 4 --min-repeat 3 --max-repeat 5 --batch 8 "
                           "--steps 20 --score-every 0 --out " + d.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    return d;
  }();
  return dir;
}

nlohmann::json json_of(const std::string& output) { return nlohmann::json::parse(output.substr(output.find('{'))); }

}  // namespace

TEST_CASE("cli gqa-convert: converts, uptrains and writes a checkpoint that measures the same", "[model][cli]") {
  const std::string src = four_head_checkpoint().string(), out = src + "-g2";
  fs::remove_all(out);
  const auto r = run_cli("gqa-convert --model " + src + " --kv-heads 2 --uptrain 10 --out " + out + " --json");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const nlohmann::json j = json_of(r.output);
  REQUIRE(j["rows"].size() == 1);
  const nlohmann::json& row = j["rows"][0];
  CHECK(row["kv_heads"] == 2);
  CHECK(row["kv_cache_bytes_per_token"] == 2 * 2 * 2 * 4 * 4);  // K and V, 2 layers, g = 2, d_k = 4, float32
  CHECK(j["kv_cache_bytes_per_token_before"] == 2 * 2 * 4 * 4 * 4);
  CHECK(row["converted"]["loss"] != j["before"]["loss"]);         // mean-pooling changed the model
  CHECK(row["uptrained"]["loss"] != row["converted"]["loss"]);    // and uptraining changed it again
  const nlohmann::json written = nlohmann::json::parse(std::ifstream(fs::path(out) / "model.json"));
  CHECK(written["config"]["kv_heads"] == 2);
  CHECK(written["step"] == 30);
  CHECK(written["parameters"][4]["name"] == "layers.0.attn.W_K.weight");
  CHECK(written["parameters"][4]["shape"] == nlohmann::json::array({8, 16}));
  // the written checkpoint, converted to its own g (the identity), measures what was reported
  const auto again = run_cli("gqa-convert --model " + out + " --kv-heads 2 --json");
  INFO(again.output);
  REQUIRE(again.code == 0);
  CHECK(json_of(again.output)["before"] == row["uptrained"]);
  CHECK(run_cli("heads --model " + out).code == 0);
  fs::remove_all(out);
}

TEST_CASE("cli gqa-convert: a list of g is one table, one folder per g", "[model][cli]") {
  const std::string src = four_head_checkpoint().string(), out = src + "-all";
  fs::remove_all(out);
  const auto r = run_cli("gqa-convert --model " + src + " --kv-heads all --out " + out);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find("4 (MHA)") != std::string::npos);
  CHECK(r.output.find("2 (GQA)") != std::string::npos);
  CHECK(r.output.find("1 (MQA)") != std::string::npos);
  CHECK(r.output.find("uptrained") == std::string::npos);  // no --uptrain, no uptraining
  CHECK(fs::exists(fs::path(out) / "kv-heads-2" / "model.json"));
  CHECK(fs::exists(fs::path(out) / "kv-heads-1" / "layers.1.attn.W_V.bias.npy"));
  const auto listed = run_cli("gqa-convert --model " + src + " --kv-heads 2,1 --json");
  REQUIRE(listed.code == 0);
  const nlohmann::json j = json_of(listed.output);
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["kv_heads"] == 2);
  CHECK(j["rows"][1]["kv_heads"] == 1);
  CHECK(j["rows"][1]["params"] < j["rows"][0]["params"]);
  fs::remove_all(out);
}

TEST_CASE("cli gqa-convert: bad input is one line, exit 2, nothing written", "[model][cli]") {
  const std::string src = four_head_checkpoint().string(), out = src + "-bad";
  const fs::path file = src + "-a-file", busy = src + "-busy";
  fs::remove_all(out);
  std::ofstream(file) << "x";
  fs::create_directories(busy);
  std::ofstream(busy / "notes.txt") << "mine";
  const std::string golden = std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/model_attn_only/params";
  for (const std::string& args : std::vector<std::string>{
           "--model " + src + " --kv-heads 3 --out " + out, "--model " + src + " --kv-heads 0 --out " + out,
           "--model " + src + " --kv-heads 8 --out " + out, "--model " + src + " --kv-heads two --out " + out,
           "--model " + src + " --kv-heads 2,2 --out " + out, "--model /nonexistent/ckpt --kv-heads 2 --out " + out,
           "--model " + golden + " --kv-heads 1 --out " + out,  // no training recipe in model.json
           "--model " + src + " --kv-heads 2 --uptrain 5 --out " + file.string(),
           "--model " + src + " --kv-heads 2 --uptrain 5 --out " + busy.string(),
           "--model " + src + " --kv-heads 2 --uptrain -1 --out " + out}) {
    const auto r = run_cli("gqa-convert " + args);
    INFO(args << " -> " << r.output);
    CHECK(r.code == 2);
    CHECK(count_lines(r.output) == 1);
    CHECK_FALSE(fs::exists(out));
  }
  CHECK(fs::file_size(file) == 1);
  CHECK(fs::exists(busy / "notes.txt"));
  CHECK_FALSE(fs::exists(busy / "model.json"));
  fs::remove_all(file);
  fs::remove_all(busy);
}
