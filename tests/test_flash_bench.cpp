// FlashBench (engine/flash_bench.h): its byte columns against the IO model and the standard
// trace, refusals before anything is allocated, and the same figures whether it is stepped
// one pass at a time (the web build's slices) or run straight through.
#include <catch2/catch.hpp>

#include "engine/error.h"
#include "engine/flash_bench.h"
#include "engine/mha.h"

using namespace attnsim;

namespace {

FlashBenchSpec small_spec() {
  FlashBenchSpec s;
  s.batch = 1;
  s.heads = 2;
  s.d_model = 32;  // d_k 16
  s.lengths = {8, 64};
  s.runs = 3;
  s.threads = 1;
  return s;
}

}  // namespace

TEST_CASE("flash bench: the byte columns are the IO model's closed forms and the standard trace's score steps") {
  FlashBench b(small_spec());
  REQUIRE(b.first_refusal().empty());
  REQUIRE(b.steps_total() == 2 * 3 * 2);
  while (b.step()) {
  }
  REQUIRE(b.done());
  REQUIRE(b.steps_done() == 12);
  for (const FlashBenchRow& r : b.rows()) {
    INFO("T = " << r.t);
    const int64_t heads = 2, T = r.t, dk = 16, br = r.shape.block_q;
    CHECK(r.standard_seconds.size() == 3);
    CHECK(r.tiled_seconds.size() == 3);
    // standard: reads Tq·dk + 2·Tk·dk + 2·Tq·Tk, writes 2·Tq·Tk + Tq·dk per head
    CHECK(r.io_standard.reads == heads * (T * dk + 2 * T * dk + 2 * T * T));
    CHECK(r.io_standard.writes == heads * (2 * T * T + T * dk));
    // tiled, as the core counted it: Q once, K and V once per query block, out once
    const int64_t qblocks = (T + br - 1) / br;
    CHECK(r.io_tiled.reads == heads * (T * dk + 2 * qblocks * T * dk));
    CHECK(r.io_tiled.writes == heads * T * dk);
    CHECK(r.standard_io_bytes() == 4 * (r.io_standard.reads + r.io_standard.writes));
    // no mask: scores, scores_scaled and alpha, each (1,2,T,T) float32, held by the trace
    CHECK(r.score_bytes == 3 * heads * T * T * 4);
    CHECK(r.tiled_core_bytes == 4 * heads * T * dk + 2 * 4 * heads * T + flash_fast_bytes(br, r.shape.block_k, dk));
  }
  CHECK(b.rows()[1].score_bytes == 98304);  // T = 64: 3 x 2·64·64·4
}

TEST_CASE("flash bench: stepped in slices it finishes with the same bytes as run straight through") {
  FlashBench straight(small_spec());
  while (straight.step()) {
  }
  FlashBench sliced(small_spec());
  int64_t calls = 0;
  for (bool more = true; more; ++calls) {
    more = sliced.step();
    CHECK(sliced.steps_done() == std::min<int64_t>(calls + 1, 12));
  }
  CHECK(calls == 12);
  CHECK_FALSE(sliced.step());  // done stays done
  for (size_t i = 0; i < 2; ++i) {
    CHECK(sliced.rows()[i].io_tiled.reads == straight.rows()[i].io_tiled.reads);
    CHECK(sliced.rows()[i].io_standard.writes == straight.rows()[i].io_standard.writes);
    CHECK(sliced.rows()[i].score_bytes == straight.rows()[i].score_bytes);
    CHECK(sliced.rows()[i].standard_median() > 0);
    CHECK(sliced.rows()[i].tiled_median() > 0);
  }
}

TEST_CASE("flash bench: a length that does not fit is refused with the figures before anything runs") {
  FlashBenchSpec s = small_spec();
  s.lengths = {64, 4096, int64_t{1} << 62};
  s.mem_limit = 16 << 20;  // 16 MiB: T 4096 needs its (2,4096,4096) scores three times
  FlashBench b(s);
  CHECK(b.rows()[0].refused.empty());
  CHECK(b.rows()[1].refused.find("T=4096 needs") != std::string::npos);
  CHECK(b.rows()[1].refused.find("over the limit of 16.00 MiB") != std::string::npos);
  CHECK(b.rows()[1].needed_bytes > s.mem_limit);
  CHECK(b.rows()[2].refused.find("does not fit in 64 bits") != std::string::npos);
  CHECK(b.first_refusal() == b.rows()[1].refused);
  CHECK(b.steps_total() == 2 * 3);  // only T 64 runs
  while (b.step()) {
  }
  CHECK(b.rows()[0].tiled_seconds.size() == 3);
  CHECK(b.rows()[1].standard_seconds.empty());
}

TEST_CASE("flash bench: a spec no row could run is one clear error") {
  FlashBenchSpec s = small_spec();
  s.runs = 0;
  CHECK_THROWS_WITH(FlashBench(s), Catch::Contains("1 to 1000 times, got 0"));
  s = small_spec();
  s.lengths = {};
  CHECK_THROWS_WITH(FlashBench(s), Catch::Contains("1 to 64 sequence lengths"));
  s = small_spec();
  s.lengths = {0};
  CHECK_THROWS_WITH(FlashBench(s), Catch::Contains("at least 1, got 0"));
  s = small_spec();
  s.heads = 5;
  CHECK_THROWS_WITH(FlashBench(s), Catch::Contains("not a multiple of heads 5"));
}
