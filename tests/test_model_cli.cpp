// attnsim-cli train / heads / ablate / trace --model, as a user runs them.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

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
