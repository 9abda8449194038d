// attnsim-cli flash: JSON summary, --compare, --dump (out.npy + tiles.json), errors.
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "engine/npy.h"
#include "helpers.h"

using attnsim::test::run_cli;
namespace fs = std::filesystem;

namespace {

nlohmann::json json_of(const std::string& output) {
  const size_t start = output.find('{');
  REQUIRE(start != std::string::npos);
  return nlohmann::json::parse(output.substr(start));
}

std::string temp_dir(const char* name) {
  return (fs::temp_directory_path() / ("attnsim-flash-" + std::string(name) + "-" + std::to_string(getpid()))).string();
}

}  // namespace

TEST_CASE("cli flash --json --compare: tiles, traffic and the comparison under the 2x rule") {
  const auto r = run_cli("flash --batch 2 --tq 37 --d-model 32 --heads 4 --block-q 8 --block-k 5 --mask causal --compare --json");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const nlohmann::json j = json_of(r.output);
  CHECK(j["block_q"] == 8);
  CHECK(j["block_k"] == 5);
  // per head, query block i (last row 7, 15, 23, 31, 36) visits key blocks 2, 4, 5, 7, 8
  CHECK(j["tiles"]["visited"] == 2 * 4 * (2 + 4 + 5 + 7 + 8));
  CHECK(j["tiles"]["total"] == 2 * 4 * 5 * 8);
  CHECK(j["io_tiled"]["reads"] == j["io_tiled_closed_form"]["reads"]);
  const int64_t heads = 8, T = 37, dk = 8;
  CHECK(j["io_standard"]["writes"] == heads * (2 * T * T + T * dk));
  CHECK(j["compare"]["out"]["ok"] == true);
  CHECK(j["compare"]["ctx_heads"]["ok"] == true);
  CHECK(j["compare"]["out"]["max_abs_diff"].get<double>() <= j["compare"]["out"]["tolerance"].get<double>());
  CHECK(j["compare"]["out"]["max_abs_diff"].get<double>() > 0);
}

TEST_CASE("cli flash --dump: out.npy equals the summary's run and tiles.json holds every tile event") {
  const std::string dir = temp_dir("dump");
  fs::remove_all(dir);
  const auto r = run_cli("flash --batch 1 --tq 6 --tk 6 --d-model 8 --heads 2 --block-q 4 --block-k 4 --mask causal --dump " + dir);
  INFO(r.output);
  REQUIRE(r.code == 0);
  const attnsim::Tensor out = attnsim::read_npy(dir + "/out.npy");
  CHECK(out.shape() == attnsim::Dims{1, 6, 8});
  std::ifstream in(dir + "/tiles.json");
  const nlohmann::json tiles = nlohmann::json::parse(in);
  // 2 heads x (query block 0: tile 0, skipped 1, final; block 1: tiles 0, 1, final)
  REQUIRE(tiles["events"].size() == 2 * 6);
  const auto& e0 = tiles["events"][0];
  CHECK(e0["kind"] == "tile");
  CHECK(e0["scores"].size() == 4);
  CHECK(e0["scores"][0].size() == 4);
  CHECK(e0["scores"][0][1] == "-inf");  // causal: query 0 does not see key 1
  CHECK(e0["m_before"][0] == "-inf");
  CHECK(e0["probs"][0][1] == 0);
  CHECK(tiles["events"][1]["kind"] == "skipped");
  CHECK(tiles["events"][2]["kind"] == "final");
  CHECK(tiles["tiles_skipped"] == 2);
  CHECK(fs::exists(dir + "/trace.json"));
  fs::remove_all(dir);
}

TEST_CASE("cli flash: bad input is one line and exit code 2") {
  auto r = run_cli("flash --tq 8 --d-model 8 --heads 2 --block-q 0 --block-k -3");
  CHECK(r.code == 2);
  CHECK(r.output.find("--block-q: value 0 is out of range") != std::string::npos);
  r = run_cli("flash --tq 8 --d-model 8 --heads 2 --bug softmax-wrong-axis");
  CHECK(r.code == 2);
  CHECK(r.output.find("correct math only") != std::string::npos);
  r = run_cli("flash --tq 8 --d-model 8 --heads 2 --mask nonsense");
  CHECK(r.code == 2);
  CHECK(r.output.find("unknown mask part") != std::string::npos);
  const std::string dir = temp_dir("big");
  fs::remove_all(dir);
  r = run_cli("flash --batch 1 --tq 4096 --d-model 64 --heads 1 --mem-limit 64M --dump " + dir);
  CHECK(r.code == 2);
  CHECK(r.output.find("the tile trace holds most of it: record one head (--tiles-head B:H)") != std::string::npos);
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("cli flash --dump --tiles-head B:H: one head's events, counters still over every head before it") {
  const std::string dir = temp_dir("head");
  fs::remove_all(dir);
  const auto r = run_cli("flash --batch 2 --tq 12 --d-model 16 --heads 4 --block-q 4 --block-k 4 --tiles-head 1:2 --dump " + dir);
  INFO(r.output);
  REQUIRE(r.code == 0);
  std::ifstream in(dir + "/tiles.json");
  const nlohmann::json tiles = nlohmann::json::parse(in);
  REQUIRE(tiles["events"].size() == 3 * 3 + 3);  // 3 x 3 tiles and 3 finals of head (1, 2)
  for (const auto& e : tiles["events"]) {
    REQUIRE(e["b"] == 1);
    REQUIRE(e["h"] == 2);
  }
  // heads (0,0..3) and (1,0..1) come before: 6 heads of Q once + K,V three times, out once
  const int64_t per_head_reads = 12 * 4 + 2 * 3 * 12 * 4, per_head_writes = 12 * 4;
  CHECK(tiles["events"].back()["io"]["reads"] == 7 * per_head_reads);
  CHECK(tiles["events"].back()["io"]["writes"] == 7 * per_head_writes);
  CHECK(tiles["io_tiled"]["reads"] == 8 * per_head_reads);
  fs::remove_all(dir);
  CHECK(run_cli("flash --tq 8 --d-model 8 --heads 2 --tiles-head 0:5 --dump " + dir).code == 2);
  CHECK(run_cli("flash --tq 8 --d-model 8 --heads 2 --tiles-head x").code == 2);
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("cli flash --bench N --sweep-tq: one row per length, times and the IO model's bytes, JSON complete") {
  const auto r = run_cli("flash --batch 1 --d-model 32 --heads 2 --bench 3 --sweep-tq 16,64 --threads 1 --json");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const nlohmann::json j = json_of(r.output)["sweep"];
  CHECK(j["runs"] == 3);
  CHECK(j["mask"] == "none");
  REQUIRE(j["rows"].size() == 2);
  const auto& row = j["rows"][1];
  CHECK(row["t"] == 64);
  CHECK(row["standard_seconds"].size() == 3);
  CHECK(row["tiled_seconds"].size() == 3);
  const int64_t heads = 2, T = 64, dk = 16;
  CHECK(row["io_standard"]["writes"] == heads * (2 * T * T + T * dk));
  CHECK(row["standard_score_steps_bytes"] == 3 * heads * T * T * 4);
  CHECK(row["tiled_median_s"].get<double>() > 0);
}

TEST_CASE("cli flash --sweep-tq: bad lengths, no --bench, a mask, or a length that cannot fit: one line, exit 2") {
  for (const char* args : {"--bench 2 --sweep-tq 256,x", "--bench 2 --sweep-tq 0", "--bench 2 --sweep-tq ,",
                           "--sweep-tq 256", "--bench 2 --sweep-tq 256 --mask causal",
                           "--bench 2 --sweep-tq 4611686018427387904", "--bench 2000 --sweep-tq 16",
                           "--bench 2 --sweep-tq 65536 --mem-limit 64M"}) {
    const auto r = run_cli(std::string("flash --batch 1 --d-model 32 --heads 2 ") + args);
    INFO(args << "\n" << r.output);
    CHECK(r.code == 2);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
}
