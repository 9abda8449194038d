// attnsim-cli as a user runs it: the outputs, the dump, and one-line errors with exit code 2.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/npy.h"
#include "helpers.h"

using namespace attnsim;
using test::run_cli;

namespace fs = std::filesystem;

static fs::path fresh_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("attnsim-cli-test-" + name);
  fs::remove_all(p);
  return p;
}

TEST_CASE("cli: trace prints the article's step table") {
  const auto r = run_cli("trace");
  CHECK(r.code == 0);
  CHECK(r.output.find("scores          matmul q·kᵀ        (32, 8, 128, 128)") != std::string::npos);
  CHECK(r.output.find("ctx_contiguous  contiguous()       (32, 128, 8, 64)   (65536, 512, 64, 1)") != std::string::npos);
}

TEST_CASE("cli: --dump writes every step that ran and trace.json, atomically") {
  const fs::path dir = fresh_dir("dump");
  const auto r = run_cli("trace --batch 2 --tq 4 --d-model 8 --heads 2 --mask query-padding=4:2 --dump " + dir.string());
  REQUIRE(r.code == 0);
  std::ifstream in(dir / "trace.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK(j["config"]["heads"] == 2);
  CHECK(j["steps"].size() == 25);
  CHECK(j["steps"][16]["name"] == "mask");  // after q_rot, k_rot
  CHECK(j["steps"][18]["nan_count"] == 2 * 2 * 4);
  CHECK(j["first_nan_step"] == "alpha");
  CHECK(read_npy((dir / "alpha.npy").string()).shape() == Dims{2, 2, 4, 4});
  CHECK(read_npy((dir / "q_heads.npy").string()).shape() == Dims{2, 2, 4, 4});
  CHECK_FALSE(fs::exists(dir / "alpha_dropped.npy"));  // skipped in eval mode
  // a second dump into the same, now full, folder is refused and changes nothing
  const auto again = run_cli("trace --batch 2 --tq 4 --d-model 8 --heads 2 --dump " + dir.string());
  CHECK(again.code == 2);
  CHECK(again.output.find("is a folder that is not empty") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("cli: cost prints exact bytes and sweeps lengths") {
  const auto r = run_cli("cost --d-model 4096 --head-dim 128 --layers 32 --seq 4096 --dtype fp16 --kv-heads 8 --json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.output);
  CHECK(j["heads"] == 32);
  CHECK(j["kv_cache_bytes"] == 2147483648LL);
  CHECK(j["kv_cache_bytes_grouped"] == 536870912LL);
  const auto s = run_cli("cost --heads 8 --dtype fp16 --sweep seq=512,2048,8192,32768");
  CHECK(s.code == 0);
  CHECK(s.output.find("1,073,741,824 B (1.00 GiB") != std::string::npos);  // T=8192, one layer
}

TEST_CASE("cli: bad input is one line and exit code 2, with nothing written") {
  const fs::path dir = fresh_dir("bad");
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"trace --d-model 10 --heads 4", "d_model 10 is not divisible by heads 4"},
      {"trace --batch 0", "--batch: value 0 is out of range (1 to 9223372036854775807) (see --help)"},
      {"trace --mask causl", "unknown mask part 'causl'"},
      {"trace --mask-bug sideways", "unknown bug 'mask-sideways'"},
      {"trace --batch 1 --tq 16384 --mem-limit 1G --dump " + dir.string(), "over the limit of 1.00 GiB"},
      {"trace --input /nonexistent.npy", "/nonexistent.npy: cannot open"},
      {"trace --backend tpu", "unknown backend 'tpu'"},
      {"trace --heads", "--heads: 1 required"},
      {"cost --dtype fp8", "unknown dtype 'fp8'"},
      {"frobnicate", "frobnicate"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const auto r = run_cli(c.args);
    CHECK(r.code == 2);
    CHECK(r.output.find(c.message) != std::string::npos);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("cli: mismatched .npy inputs and weights are named in the error") {
  const fs::path dir = fresh_dir("npy");
  fs::create_directories(dir);
  write_npy((dir / "q.npy").string(), Tensor::zeros({1, 3, 8}));
  write_npy((dir / "k.npy").string(), Tensor::zeros({1, 5, 6}));
  auto r = run_cli("trace --query " + (dir / "q.npy").string() + " --key " + (dir / "k.npy").string() +
                   " --value " + (dir / "k.npy").string() + " --heads 2");
  CHECK(r.code == 2);
  CHECK(r.output.find("input 'key' has shape (1, 5, 6) but the config needs (1, 5, 8)") != std::string::npos);
  r = run_cli("trace --input " + (dir / "q.npy").string() + " --heads 2 --weights " + dir.string());
  CHECK(r.code == 2);
  CHECK(r.output.find("W_Q.weight.npy: cannot open") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("cli: --mask-file takes a bool mask broadcastable to (B,h,Tq,Tk) and ORs it in") {
  const fs::path dir = fresh_dir("maskfile");
  fs::create_directories(dir);
  Tensor m = Tensor::zeros({1, 1, 4, 4}, DType::Bool);
  m.b8()[3] = 1;  // query 0 may not see key 3
  write_npy((dir / "m.npy").string(), m);
  const fs::path out = dir / "dump";
  auto r = run_cli("trace --batch 2 --tq 4 --d-model 8 --heads 2 --mask-file " + (dir / "m.npy").string() +
                   " --dump " + out.string());
  REQUIRE(r.code == 0);
  const Tensor alpha = read_npy((out / "alpha.npy").string());
  CHECK(alpha.at({1, 1, 0, 3}) == 0.0f);
  CHECK(alpha.at({1, 1, 1, 3}) > 0.0f);
  write_npy((dir / "f.npy").string(), Tensor::zeros({1, 1, 4, 4}));
  r = run_cli("trace --batch 2 --tq 4 --d-model 8 --heads 2 --mask-file " + (dir / "f.npy").string());
  CHECK(r.code == 2);
  CHECK(r.output.find("the mask file must be bool") != std::string::npos);
  write_npy((dir / "w.npy").string(), Tensor::zeros({3, 1, 4, 4}, DType::Bool));
  r = run_cli("trace --batch 2 --tq 4 --d-model 8 --heads 2 --mask-file " + (dir / "w.npy").string());
  CHECK(r.code == 2);
  CHECK(r.output.find("does not broadcast to the scores' shape (2, 2, 4, 4)") != std::string::npos);
  fs::remove_all(dir);
}
