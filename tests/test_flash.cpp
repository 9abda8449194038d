// The tiled FlashAttention path: the online softmax ends where the plain softmax is, the
// output equals the standard path (FlashAttention's 2x rule), wholly hidden tiles are skipped,
// and the slow-memory counters match the closed forms.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "engine/flash.h"

using namespace attnsim;

namespace {

// (B,h,T,dk) values; as a transposed view of (B,T,h,dk) when `transposed`, like q_heads.
Tensor random_heads(int64_t B, int64_t H, int64_t T, int64_t dk, uint32_t seed, bool transposed = false,
                    float spread = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, spread);
  std::vector<float> v(static_cast<size_t>(B * H * T * dk));
  for (float& x : v) x = normal(gen);
  if (!transposed) return Tensor::from_values({B, H, T, dk}, v);
  return Tensor::from_values({B, T, H, dk}, v).transpose(1, 2);
}

Tensor random_bool(const Dims& shape, uint32_t seed, double p_hidden) {
  std::mt19937 gen(seed);
  std::bernoulli_distribution hide(p_hidden);
  Tensor t = Tensor::empty(shape, DType::Bool);
  for (int64_t i = 0; i < t.numel(); ++i) t.b8()[i] = hide(gen);
  return t;
}

struct Case {
  int64_t B, H, Tq, Tk, dk;
};

// Every row's true max and Σ exp(s - max) in float64, straight from q and k.
void row_stats_f64(const Tensor& q, const Tensor& k, const FlashMask& mask, double scale, int64_t b, int64_t h,
                   int64_t i, double* mx, double* sum) {
  const int64_t Tq = q.size(2), Tk = k.size(2), dk = q.size(3);
  std::vector<double> s(static_cast<size_t>(Tk));
  *mx = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < Tk; ++j) {
    double dot = 0;
    for (int64_t c = 0; c < dk; ++c) dot += double(q.at({b, h, i, c})) * double(k.at({b, h, j, c}));
    s[j] = mask.hidden(b, h, i, j, Tq, Tk) ? -std::numeric_limits<double>::infinity() : dot * scale;
    *mx = std::max(*mx, s[j]);
  }
  *sum = 0;
  for (double x : s)
    if (x != -std::numeric_limits<double>::infinity()) *sum += std::exp(x - *mx);
}

}  // namespace

TEST_CASE("flash: after the last tile each row's running max is the row max and the running sum the sum of exponentials") {
  const Case c{2, 3, 29, 23, 8};
  const Tensor q = random_heads(c.B, c.H, c.Tq, c.dk, 1), k = random_heads(c.B, c.H, c.Tk, c.dk, 2),
               v = random_heads(c.B, c.H, c.Tk, c.dk, 3);
  MaskSpec spec;
  spec.key_lengths = {23, 17};
  spec.side = PadSide::Left;  // the first key tiles of batch 1 are hidden: m starts at -inf there
  const FlashMask mask = FlashMask::from_spec(spec);
  FlashOptions o;
  o.block_q = 6;
  o.block_k = 5;
  o.record_tiles = true;
  const double scale = 1.0 / std::sqrt(double(c.dk));
  const FlashCoreResult r = flash_attention_core(q, k, v, mask, float(scale), o);

  int64_t finals = 0;
  for (const FlashEvent& e : r.events) {
    if (e.kind != FlashEventKind::Final) continue;
    ++finals;
    for (int64_t x = 0; x < e.rows; ++x) {
      double mx, sum;
      row_stats_f64(q, k, mask, scale, e.b, e.h, e.q0 + x, &mx, &sum);
      const float m_run = e.m.f32()[x], l_run = e.l.f32()[x];
      REQUIRE(m_run == Approx(mx).epsilon(1e-5).margin(1e-6));
      REQUIRE(l_run == Approx(sum).epsilon(1e-5));
      // also the core's (B,h,Tq) outputs
      REQUIRE(r.m.at({e.b, e.h, e.q0 + x}) == m_run);
      REQUIRE(r.l.at({e.b, e.h, e.q0 + x}) == l_run);
    }
  }
  CHECK(finals == c.B * c.H * 5);  // ceil(29 / 6) = 5 query blocks per head
}

TEST_CASE("flash: every tile visit rescales by exp(m_old - m_new) and the running max equals the max of the tiles seen") {
  const Tensor q = random_heads(1, 2, 17, 4, 11, false, 3.0f), k = random_heads(1, 2, 19, 4, 12, false, 3.0f),
               v = random_heads(1, 2, 19, 4, 13);
  FlashOptions o;
  o.block_q = 4;
  o.block_k = 3;
  o.record_tiles = true;
  MaskSpec spec;
  spec.causal = true;
  const FlashCoreResult r = flash_attention_core(q, k, v, FlashMask::from_spec(spec), 0.5f, o);
  std::vector<float> seen_max(17 * 2, -std::numeric_limits<float>::infinity());
  int64_t tiles = 0;
  for (const FlashEvent& e : r.events) {
    if (e.kind != FlashEventKind::Tile) continue;
    ++tiles;
    REQUIRE(e.scores.shape() == Dims{e.rows, e.cols});
    REQUIRE(e.probs.shape() == Dims{e.rows, e.cols});
    REQUIRE(e.acc.shape() == Dims{e.rows, 4});
    for (int64_t x = 0; x < e.rows; ++x) {
      float& seen = seen_max[e.h * 17 + e.q0 + x];
      REQUIRE(e.m_before.f32()[x] == seen);
      for (int64_t j = 0; j < e.cols; ++j) seen = std::max(seen, e.scores.f32()[x * e.cols + j]);
      REQUIRE(e.m_after.f32()[x] == seen);
      const float mb = e.m_before.f32()[x], ma = e.m_after.f32()[x];
      const float expected_c = ma == -std::numeric_limits<float>::infinity() ? 1.0f : std::exp(mb - ma);
      REQUIRE(e.rescale.f32()[x] == expected_c);
      double psum = 0;
      for (int64_t j = 0; j < e.cols; ++j) {
        const float s = e.scores.f32()[x * e.cols + j], p = e.probs.f32()[x * e.cols + j];
        if (s == -std::numeric_limits<float>::infinity()) REQUIRE(p == 0.0f);
        else {
          INFO("s " << s << " m_after " << ma << " p " << p);
          REQUIRE(p == Approx(std::exp(s - ma)).epsilon(1e-6));  // a vector exp: within 4 ulp
        }
        psum += p;
      }
      REQUIRE(e.l_after.f32()[x] == Approx(expected_c * e.l_before.f32()[x] + psum).epsilon(1e-5));
    }
  }
  CHECK(tiles > 0);
}

TEST_CASE("flash: equals the standard path within 2x the float32 error across shapes, block sizes and masks") {
  const std::vector<Case> cases = {{1, 1, 1, 1, 4},  {2, 3, 7, 5, 4},    {1, 2, 33, 17, 16},
                                   {2, 2, 64, 64, 8}, {1, 1, 100, 37, 64}, {3, 1, 13, 40, 5}};
  const std::vector<std::pair<int64_t, int64_t>> blocks = {{1, 1}, {3, 5}, {16, 16}, {64, 7}, {200, 200}};
  int64_t checked = 0, within_2x_without_floor = 0;
  for (const Case& c : cases) {
    const Tensor q = random_heads(c.B, c.H, c.Tq, c.dk, 21 + c.Tq, true, 2.0f);
    const Tensor k = random_heads(c.B, c.H, c.Tk, c.dk, 22 + c.Tk, true, 2.0f);
    const Tensor v = random_heads(c.B, c.H, c.Tk, c.dk, 23 + c.dk);
    std::vector<std::pair<std::string, FlashMask>> masks;
    masks.emplace_back("none", FlashMask());
    MaskSpec causal;
    causal.causal = true;
    masks.emplace_back("causal", FlashMask::from_spec(causal));
    MaskSpec keypad;
    for (int64_t b = 0; b < c.B; ++b) keypad.key_lengths.push_back(std::max<int64_t>(1, c.Tk - 2 * b - 1));
    masks.emplace_back("key-padding right", FlashMask::from_spec(keypad));
    keypad.side = PadSide::Left;
    keypad.causal = true;
    masks.emplace_back("causal + key-padding left", FlashMask::from_spec(keypad));
    MaskSpec qpad;
    for (int64_t b = 0; b < c.B; ++b) qpad.query_lengths.push_back(std::max<int64_t>(0, c.Tq - 3 * b - 1));
    masks.emplace_back("query-padding (NaN rows)", FlashMask::from_spec(qpad));
    masks.emplace_back("mask file (B,1,Tq,Tk)", FlashMask::from_spec(MaskSpec(), random_bool({c.B, 1, c.Tq, c.Tk}, 5, 0.4)));
    masks.emplace_back("mask file (Tk) broadcast", FlashMask::from_spec(causal, random_bool({c.Tk}, 6, 0.3)));
    for (const auto& [name, mask] : masks) {
      const double scale = 1.0 / std::sqrt(double(c.dk));
      const Tensor std32 = attention_core_f32(q, k, v, mask, float(scale));
      const std::vector<double> ref64 = attention_core_f64(q, k, v, mask, scale);
      for (auto [bq, bk] : blocks) {
        FlashOptions o;
        o.block_q = bq;
        o.block_k = bk;
        const FlashCoreResult r = flash_attention_core(q, k, v, mask, float(scale), o);
        const FlashCompareFigures f = compare_with_reference(r.out, std32, ref64);
        INFO("B=" << c.B << " h=" << c.H << " Tq=" << c.Tq << " Tk=" << c.Tk << " dk=" << c.dk << " mask " << name
                  << " Br=" << bq << " Bc=" << bk << ": max|flash-std| " << f.max_abs_diff << " tolerance "
                  << f.tolerance << " NaN mismatches " << f.nan_mismatches);
        REQUIRE(f.nan_mismatches == 0);
        REQUIRE(f.max_abs_diff <= f.tolerance);
        // FlashAttention's own form of the rule, against the float64 reference
        REQUIRE(f.flash_error <= 2 * f.std_error + f.floor);
        ++checked;
        if (f.max_abs_diff <= 2 * f.std_error) ++within_2x_without_floor;
      }
    }
  }
  // The floor is a safety net for exact cases, not what makes the rule pass.
  CHECK(within_2x_without_floor >= checked * 9 / 10);
}

TEST_CASE("flash: a fully hidden row is NaN exactly where the standard path has NaN, a row whose first tiles are hidden is not") {
  const Tensor q = random_heads(2, 2, 10, 4, 31), k = random_heads(2, 2, 12, 4, 32), v = random_heads(2, 2, 12, 4, 33);
  MaskSpec spec;
  spec.query_lengths = {10, 6};  // batch 1: rows 6..9 padded -> fully hidden -> NaN
  spec.key_lengths = {12, 5};    // left padding: batch 1 sees keys 7..11 only
  spec.side = PadSide::Left;     // (left query padding: batch 1 rows 0..3 hidden)
  const FlashMask mask = FlashMask::from_spec(spec);
  FlashOptions o;
  o.block_q = 3;
  o.block_k = 4;  // key tile 0 (keys 0..3) is wholly hidden for batch 1
  const FlashCoreResult r = flash_attention_core(q, k, v, mask, 0.5f, o);
  const Tensor std32 = attention_core_f32(q, k, v, mask, 0.5f);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 10; ++i) {
      const bool hidden_row = i < 4;  // left query padding of batch 1
      REQUIRE(std::isnan(r.out.at({1, h, i, 0})) == hidden_row);
      REQUIRE(std::isnan(std32.at({1, h, i, 0})) == hidden_row);
      REQUIRE_FALSE(std::isnan(r.out.at({0, h, i, 0})));
    }
  const FlashCompareFigures f = compare_with_reference(r.out, std32, attention_core_f64(q, k, v, mask, 0.5));
  CHECK(f.nan_count == 2 * 4 * 4);  // 2 heads x 4 rows x dk 4
  CHECK(f.nan_mismatches == 0);
  CHECK(f.ok());

  // A visited tile in which row 0 sees nothing yet (row 1 does): row 0's m stays -inf, its
  // P row is 0 and c = 1, so its later visible keys are not poisoned by exp(-inf - -inf).
  Tensor file = Tensor::zeros({1, 1, 10, 12}, DType::Bool);
  for (int64_t j = 0; j < 4; ++j) file.b8()[j] = 1;  // row 0, keys 0..3 (= key tile 0)
  FlashOptions o2;
  o2.block_q = 2;
  o2.block_k = 4;
  o2.record_tiles = true;
  const FlashMask m2 = FlashMask::from_spec(MaskSpec(), file);
  const Tensor q1 = random_heads(1, 1, 10, 4, 34), k1 = random_heads(1, 1, 12, 4, 35), v1 = random_heads(1, 1, 12, 4, 36);
  const FlashCoreResult r2 = flash_attention_core(q1, k1, v1, m2, 0.5f, o2);
  const FlashEvent& first = r2.events.front();
  REQUIRE(first.kind == FlashEventKind::Tile);
  CHECK(first.m_after.f32()[0] == -std::numeric_limits<float>::infinity());
  CHECK(first.rescale.f32()[0] == 1.0f);
  CHECK(first.l_after.f32()[0] == 0.0f);
  for (int64_t j = 0; j < 4; ++j) CHECK(first.probs.f32()[j] == 0.0f);
  CHECK(std::isfinite(first.m_after.f32()[1]));
  const FlashCompareFigures f2 = compare_with_reference(r2.out, attention_core_f32(q1, k1, v1, m2, 0.5f),
                                                        attention_core_f64(q1, k1, v1, m2, 0.5));
  CHECK(f2.nan_count == 0);
  CHECK(f2.ok());
}

TEST_CASE("flash: causal masking skips exactly the tiles above the diagonal") {
  const int64_t T = 64, dk = 8;
  const Tensor q = random_heads(1, 2, T, dk, 41), k = random_heads(1, 2, T, dk, 42), v = random_heads(1, 2, T, dk, 43);
  MaskSpec spec;
  spec.causal = true;
  const FlashMask mask = FlashMask::from_spec(spec);

  SECTION("square blocks: n(n-1)/2 of n² tiles skipped per head") {
    FlashOptions o;
    o.block_q = o.block_k = 16;
    o.record_tiles = true;
    const FlashCoreResult r = flash_attention_core(q, k, v, mask, 0.25f, o);
    CHECK(r.stats.tiles_total == 2 * 16);
    CHECK(r.stats.tiles_skipped == 2 * 6);
    CHECK(r.stats.tiles_visited == 2 * 10);
    for (const FlashEvent& e : r.events) {
      if (e.kind == FlashEventKind::Final) continue;
      REQUIRE((e.kind == FlashEventKind::Skipped) == (e.k_block > e.q_block));
      if (e.kind == FlashEventKind::Skipped) REQUIRE_FALSE(e.scores.defined());
    }
  }
  SECTION("Br=16, Bc=8: key block j is visited by query block i iff 8j <= 16i+15") {
    FlashOptions o;
    o.block_q = 16;
    o.block_k = 8;
    o.record_tiles = true;
    const FlashCoreResult r = flash_attention_core(q, k, v, mask, 0.25f, o);
    CHECK(r.stats.tiles_visited == 2 * (2 + 4 + 6 + 8));
    CHECK(r.stats.tiles_skipped == 2 * 32 - 2 * 20);
    for (const FlashEvent& e : r.events)
      if (e.kind != FlashEventKind::Final)
        REQUIRE((e.kind == FlashEventKind::Tile) == (8 * e.k_block <= 16 * e.q_block + 15));
  }
  SECTION("no mask: nothing skipped") {
    FlashOptions o;
    o.block_q = o.block_k = 16;
    const FlashCoreResult r = flash_attention_core(q, k, v, FlashMask(), 0.25f, o);
    CHECK(r.stats.tiles_skipped == 0);
    CHECK(r.stats.tiles_visited == 2 * 16);
  }
}

TEST_CASE("flash: slow-memory traffic matches the closed-form counts of the IO model") {
  // B=2, h=3, T=96, dk=16, Br=Bc=32: n = 3 blocks per side
  const int64_t B = 2, H = 3, T = 96, dk = 16, Bs = 32, n = 3;
  const Tensor q = random_heads(B, H, T, dk, 51), k = random_heads(B, H, T, dk, 52), v = random_heads(B, H, T, dk, 53);
  FlashOptions o;
  o.block_q = o.block_k = Bs;
  o.record_tiles = true;

  const FlashCoreResult dense = flash_attention_core(q, k, v, FlashMask(), 0.25f, o);
  // tiled: Q once, K and V once per query block, out once
  CHECK(dense.stats.io.reads == B * H * (T * dk + 2 * n * T * dk));
  CHECK(dense.stats.io.writes == B * H * T * dk);
  // standard: S and P written out and read back
  CHECK(dense.stats.io_standard.reads == B * H * (T * dk + 2 * T * dk + 2 * T * T));
  CHECK(dense.stats.io_standard.writes == B * H * (2 * T * T + T * dk));
  CHECK(dense.stats.io.reads == flash_io_tiled_no_skip(dense.stats.shape).reads);
  // the running counters of the last event are the totals
  CHECK(dense.events.back().io.reads == dense.stats.io.reads);
  CHECK(dense.events.back().io.writes == dense.stats.io.writes);
  CHECK(dense.events.back().io_standard.reads == dense.stats.io_standard.reads);
  CHECK(dense.events.back().io_standard.writes == dense.stats.io_standard.writes);
  // and they never go down
  for (size_t i = 1; i < dense.events.size(); ++i) {
    REQUIRE(dense.events[i].io.reads >= dense.events[i - 1].io.reads);
    REQUIRE(dense.events[i].io_standard.writes >= dense.events[i - 1].io_standard.writes);
  }

  MaskSpec spec;
  spec.causal = true;
  const FlashMask causal = FlashMask::from_spec(spec);
  const FlashCoreResult tri = flash_attention_core(q, k, v, causal, 0.25f, o);
  // query block i reads key blocks 0..i: Σ (i+1) = n(n+1)/2 K and V tiles of Bc·dk each
  CHECK(tri.stats.io.reads == B * H * (T * dk + 2 * dk * Bs * n * (n + 1) / 2));
  CHECK(tri.stats.io.reads == flash_io_tiled(tri.stats.shape, causal).reads);
  CHECK(tri.events.back().io.reads == tri.stats.io.reads);
  // skipping changes traffic, never the standard path's figures
  CHECK(tri.stats.io_standard.reads == dense.stats.io_standard.reads);

  // ragged: T=100 with Br=32, Bc=24 (blocks of 32,32,32,4 and 24,24,24,24,4)
  const Tensor q2 = random_heads(1, 1, 100, dk, 54), k2 = random_heads(1, 1, 100, dk, 55), v2 = random_heads(1, 1, 100, dk, 56);
  FlashOptions o2;
  o2.block_q = 32;
  o2.block_k = 24;
  const FlashCoreResult rag = flash_attention_core(q2, k2, v2, FlashMask(), 0.25f, o2);
  CHECK(rag.stats.io.reads == 100 * dk + 2 * 4 * 100 * dk);
  const FlashCoreResult ragc = flash_attention_core(q2, k2, v2, causal, 0.25f, o2);
  // query block i (last row 31, 63, 95, 99) visits key blocks with k0 <= its last row:
  // keys 0..47, 0..71, 0..95 (block 96..99 starts after row 95), 0..99
  CHECK(ragc.stats.io.reads == 100 * dk + 2 * dk * (48 + 72 + 96 + 100));
  CHECK(ragc.stats.io.reads == flash_io_tiled(ragc.stats.shape, causal).reads);

  // with one traced head the counters still run over every head before it
  FlashOptions one = o;
  one.trace_batch = 1;
  one.trace_head = 2;
  const FlashCoreResult last = flash_attention_core(q, k, v, FlashMask(), 0.25f, one);
  REQUIRE(last.events.size() == static_cast<size_t>(n * n + n));
  CHECK(last.events.back().io.reads == dense.stats.io.reads);
  CHECK(last.events.back().io_standard.writes == dense.stats.io_standard.writes);
}

TEST_CASE("flash: memory figures are O(T) for the tiled core and O(T²) for the standard one") {
  FlashShape s{1, 8, 4096, 4096, 64, 64, 512};
  CHECK(flash_fast_bytes(64, 512, 64) == 4 * (64 * 64 + 2 * 512 * 64 + 64 * 512 + 64 * 64 + 2 * 64));
  CHECK(flash_io_standard(s).writes == 8 * (2 * 4096LL * 4096 + 4096 * 64));
  const FlashBlocks d = default_flash_blocks(64, 2 << 20);
  CHECK(d.block_q == 128);  // 4·(128·64·2 + 2·128·64 + 128² + 256) = 197,632 B <= 2 MiB / 4
  CHECK(d.block_k == 128);
  const FlashBlocks wide = default_flash_blocks(512, 2 << 20);  // one head of 512
  CHECK(wide.block_k == 48);  // 402,816 B; 64 x 64 would need 541,184 B > 524,288 B
  CHECK(flash_fast_bytes(wide.block_q, wide.block_k, 512) <= (2 << 20) / 4);
  CHECK(flash_fast_bytes(64, 64, 512) > (2 << 20) / 4);
  const FlashBlocks small = default_flash_blocks(64, 256 << 10);  // a 256 KiB L2
  CHECK(small.block_k == 48);  // 58,752 B <= 65,536 B; 64 x 64 needs 82,432 B
  CHECK(default_flash_blocks(4096, 64 << 10).block_q == 1);  // nothing fits: one row at a time
}

TEST_CASE("flash: the result does not depend on the number of threads") {
  const Tensor q = random_heads(2, 3, 45, 8, 61, true), k = random_heads(2, 3, 45, 8, 62, true),
               v = random_heads(2, 3, 45, 8, 63, true);
  MaskSpec spec;
  spec.causal = true;
  FlashOptions o;
  o.block_q = 7;
  o.block_k = 9;
  o.record_tiles = true;
  o.threads = 1;
  const FlashCoreResult one = flash_attention_core(q, k, v, FlashMask::from_spec(spec), 0.3f, o);
  o.threads = 4;
  const FlashCoreResult four = flash_attention_core(q, k, v, FlashMask::from_spec(spec), 0.3f, o);
  REQUIRE(one.out.to_vector() == four.out.to_vector());
  REQUIRE(one.events.size() == four.events.size());
  for (size_t i = 0; i < one.events.size(); ++i) {
    REQUIRE(one.events[i].q_block == four.events[i].q_block);
    REQUIRE(one.events[i].k_block == four.events[i].k_block);
    REQUIRE(one.events[i].io.reads == four.events[i].io.reads);
  }
}

TEST_CASE("flash: bad input is one clear error") {
  const Tensor q = random_heads(1, 1, 4, 4, 1), k = random_heads(1, 1, 5, 4, 2), v = random_heads(1, 1, 6, 4, 3);
  CHECK_THROWS_WITH(flash_attention_core(q, k, v, FlashMask(), 1.0f), Catch::Contains("do not fit"));
  FlashOptions o;
  o.block_q = -1;
  CHECK_THROWS_WITH(flash_attention_core(q, k, k, FlashMask(), 1.0f, o), Catch::Contains("block sizes must be positive"));
  MaskSpec spec;
  spec.key_lengths = {1, 2};
  CHECK_THROWS_WITH(flash_attention_core(q, k, k, FlashMask::from_spec(spec), 1.0f),
                    Catch::Contains("2 lengths but the batch has 1"));
  FlashOptions big;
  big.record_tiles = true;
  big.mem_limit = 1000;
  CHECK_THROWS_WITH(flash_attention_core(q, k, k, FlashMask(), 1.0f, big), Catch::Contains("tile trace would hold"));
}
