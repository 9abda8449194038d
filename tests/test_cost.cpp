// The cost model against figures computed by hand (and against the article's exercises).
#include <catch2/catch.hpp>

#include "engine/cost.h"
#include "engine/error.h"

using namespace attnsim;

TEST_CASE("parameters of the four projections do not depend on the number of heads") {
  CostConfig c;  // d_model 512, 8 heads
  CHECK(compute_cost(c).params_no_bias == 1048576);    // 4·512²
  CHECK(compute_cost(c).params_with_bias == 1050624);  // + 4·512, as nn.MultiheadAttention counts
  c.heads = 16;
  CHECK(compute_cost(c).params_no_bias == 1048576);
}

TEST_CASE("the score tensor grows with h and with T squared") {
  CostConfig c;
  c.seq = 2048;
  c.dtype = CostDType::FP16;
  const int64_t base = compute_cost(c).score_bytes_layer;
  CHECK(base == 1LL * 8 * 2048 * 2048 * 2);  // 64 MiB
  c.heads = 16;
  CHECK(compute_cost(c).score_bytes_layer == 2 * base);
  c.heads = 8;
  c.seq = 8192;
  CHECK(compute_cost(c).score_bytes_layer == 16 * base);  // 4× the length, 16× the bytes
  c.layers = 32;
  c.batch = 8;
  CHECK(compute_cost(c).score_bytes_model == 274877906944LL);  // 256 GiB
}

TEST_CASE("exercise 1: d_model 4096 with d_k 128 has 32 heads and 67,108,864 weights") {
  CostConfig c;
  c.d_model = 4096;
  c.heads = 4096 / 128;
  CHECK(c.heads == 32);
  CHECK(compute_cost(c).params_no_bias == 67108864);
  CHECK(format_count(compute_cost(c).params_no_bias) == "67,108,864");
}

TEST_CASE("exercise 3: the KV cache at 32 layers, 32 heads, d_k 128, T 4096, fp16 is 2 GiB") {
  CostConfig c;
  c.d_model = 4096;
  c.heads = 32;
  c.layers = 32;
  c.seq = 4096;
  c.dtype = CostDType::FP16;
  c.kv_heads = 8;
  const Cost r = compute_cost(c);
  CHECK(r.kv_cache_bytes == 2147483648LL);        // 1·32·2·32·4096·128·2 (the article says 6.4 GB)
  CHECK(r.kv_cache_bytes_grouped == 536870912LL);  // 8 kv heads: a quarter
  CHECK(format_bytes(r.kv_cache_bytes) == "2,147,483,648 B (2.00 GiB, 2.15 GB)");
}

TEST_CASE("cost quantities are available by name and bad configs are errors") {
  const Cost r = compute_cost(CostConfig{});
  CHECK(cost_quantity(r, "params_no_bias") == 1048576.0);
  CHECK_THROWS_WITH(cost_quantity(r, "nope"), Catch::Contains("unknown cost quantity 'nope'"));
  CostConfig c;
  c.heads = 7;
  CHECK_THROWS_WITH(compute_cost(c), Catch::Contains("not divisible by heads 7"));
  c.heads = 8;
  c.kv_heads = 3;
  CHECK_THROWS_WITH(compute_cost(c), Catch::Contains("not divisible by kv-heads 3"));
  CHECK_THROWS_WITH(parse_cost_dtype("fp8"), Catch::Contains("valid: fp32, fp16, bf16, int8"));
}
