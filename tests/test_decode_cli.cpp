// attnsim-cli decode, cost --block and trace --kv-heads as a user runs them: the JSON and the
// dump agree with the engine, the cache bytes equal the formula, bad input is one line + 2.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/npy.h"
#include "helpers.h"

using namespace attnsim;
using test::run_cli;

namespace fs = std::filesystem;

static int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST_CASE("cli decode --json: one prefill, then one row per step; storage bytes equal the formula") {
  const auto r = run_cli("decode --prompt hello --steps 4 --kv-heads 2 --layers 3 --json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.output);
  REQUIRE(j["steps"].size() == 5);
  CHECK(j["steps"][0]["rows"] == 5);
  CHECK(j["steps"][0]["scores_shape"] == std::vector<int64_t>{1, 4, 5, 5});
  CHECK(j["steps"][4]["scores_shape"] == std::vector<int64_t>{1, 4, 1, 9});
  CHECK(j["steps"][4]["k_cache_shape"] == std::vector<int64_t>{1, 2, 9, 16});
  CHECK(j["steps"][4]["append_bytes_per_layer"] == 2 * 2 * 16 * 4);
  // 3 layers · 2 (K,V) · g=2 · dk=16 · 4 bytes = 768 per token; T_max = 9
  CHECK(j["cache"]["bytes_per_token"] == 768);
  CHECK(j["cache"]["storage_bytes"] == 9 * 768);
  CHECK(j["cache"]["storage_bytes"] == j["cache"]["formula_bytes"]);
  CHECK(j["text"][0].get<std::string>().substr(0, 5) == "hello");
  CHECK(j["text"][0].get<std::string>().size() == 9);
}

TEST_CASE("cli decode --cache paged: block tables and the free list") {
  const auto r = run_cli("decode --cache paged:4 --prompt a --prompt abcdefg --steps 2 --json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.output);
  // T_max = 7 + 2 = 9: 3 blocks per sequence in the pool; lengths 3 and 9
  CHECK(j["cache"]["block_tables"][0]["blocks"] == std::vector<int64_t>{0});
  CHECK(j["cache"]["block_tables"][1]["blocks"] == std::vector<int64_t>{1, 2, 3});
  CHECK(j["cache"]["block_tables"][1]["length"] == 9);
  CHECK(j["cache"]["free_list"] == std::vector<int64_t>{4, 5});
  CHECK(j["cache"]["storage_bytes"] == j["cache"]["formula_bytes"]);
  CHECK(j["cache"]["used_bytes"] == (3 + 9) * j["cache"]["bytes_per_token"].get<int64_t>());
  // the prefill feeds each prompt whole: 1 row and 7 rows, both from position 0
  CHECK(j["steps"][0]["fed_rows"] == std::vector<int64_t>{1, 7});
  CHECK(j["steps"][0]["first_position"] == 0);
  CHECK(j["steps"][1]["fed_rows"] == std::vector<int64_t>{1, 1});
  CHECK(j["steps"][1]["first_position"] == 1);  // sequence 0's: it is 6 positions behind sequence 1
}

TEST_CASE("cli decode --dump: every step's trace per layer, the cache append reads into the storage") {
  const fs::path dir = fs::temp_directory_path() / "attnsim-cli-test-decode-dump";
  fs::remove_all(dir);
  const auto r = run_cli("decode --prompt abc --steps 2 --kv-heads 1 --dump " + dir.string());
  REQUIRE(r.code == 0);
  std::ifstream in(dir / "step_0002" / "layer_1" / "trace.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK(j["config"]["kv_heads"] == 1);
  const auto names = j["steps"];
  CHECK(names.size() == 31);  // every name: cache steps, grouped steps, q_rot and k_rot (skipped)
  for (const auto& s : names) {
    if (s["name"] == "k_cache_append") {
      CHECK(s["kind"] == "copy");
      CHECK(s["writes_existing"] == true);
      CHECK(s["new_bytes"] == 0);
    }
    if (s["name"] == "k_grouped") CHECK(s["strides"][2] == 0);
  }
  CHECK(read_npy((dir / "step_0002" / "layer_1" / "alpha.npy").string()).shape() == Dims{1, 4, 1, 5});
  CHECK(read_npy((dir / "step_0002" / "layer_1" / "k_cache.npy").string()).shape() == Dims{1, 1, 5, 16});
  fs::remove_all(dir);
}

TEST_CASE("cli decode: bad input is one line and exit code 2") {
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--kv-heads 3", "not divisible by kv-heads 3"},
           {"--prompt abcdefghij --max-len 5", "longer than T_max 5"},
           {"--cache paged:0", "block size must be positive, got 0"},
           {"--policy window=40 --max-len 20", "window 40 is larger than T_max 20"},
           {"--cache ring", "unknown --cache 'ring'"},
           {"--policy sink=1,window=4 --cache paged:4", "the paged cache keeps every position"}}) {
    const auto r = run_cli("decode " + args);
    INFO(args);
    CHECK(r.code == 2);
    CHECK(r.output.find(says) != std::string::npos);
    CHECK(lines(r.output) == 1);
  }
}

TEST_CASE("cli cost --block --lengths: the paged-cache waste against contiguous T_max") {
  const auto r = run_cli("cost --d-model 64 --heads 4 --kv-heads 2 --layers 2 --seq 32 --block 8 --lengths 1,10,17 --json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.output);
  const int64_t per_token = 2 * 2 * 2 * 16 * 4;
  CHECK(j["kv_bytes_per_token"] == per_token);
  CHECK(j["paged_cache"]["blocks"] == 1 + 2 + 3);
  CHECK(j["paged_cache"]["paged_bytes"] == 6 * 8 * per_token);
  CHECK(j["paged_cache"]["contiguous_bytes"] == 3 * 32 * per_token);
  CHECK(j["paged_cache"]["used_bytes"] == 28 * per_token);
  const auto bad = run_cli("cost --block 0 --lengths 3");
  CHECK(bad.code == 2);
  CHECK(bad.output.find("block size must be positive") != std::string::npos);
}

TEST_CASE("cli trace --kv-heads shows the stride-0 group view") {
  const auto r = run_cli("trace --batch 1 --tq 4 --d-model 16 --heads 4 --kv-heads 2 --json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.output);
  CHECK(j["steps"].size() == 27);  // 25 and k_grouped, v_grouped
  CHECK(j["steps"][14]["name"] == "k_grouped");  // after q_rot, k_rot (skipped: no RoPE)
  CHECK(j["steps"][14]["strides"][2] == 0);
  CHECK(j["steps"][14]["kind"] == "view");
  CHECK(run_cli("trace --heads 8 --kv-heads 3").code == 2);
}
