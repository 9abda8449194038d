// Grouped K/V heads (GQA / MQA) and decode over a KV cache: the stride-0 view shares its
// storage, decoding token by token gives the full causal forward's outputs, the paged cache
// gives the contiguous cache's, the cache's real bytes equal the cost model, and each
// eviction policy keeps exactly the positions it promises.
//
// Rounding bound: decode and forward do the same float32 math, but q·kᵀ and alpha·v run as
// sgemms of other shapes (one row against t keys, vs T rows against T), so sums are added in
// other orders. With d = 32, dk = 8 and O(1) activations the largest difference seen is
// 3e-7 (a few float32 ulps of the outputs); the tests allow kDecodeBound = 2e-5 (for two stacked layers, 4e-5).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "engine/cost.h"
#include "engine/decode.h"
#include "engine/decode_stack.h"
#include "engine/error.h"
#include "engine/mha.h"
#include "engine/reference.h"
#include "helpers.h"

using namespace attnsim;
using test::max_abs_diff;

static constexpr double kDecodeBound = 2e-5;

static MhaConfig gqa(int64_t B, int64_t T, int64_t d, int64_t h, int64_t g) {
  MhaConfig c = test::sized_config(B, T, T, d, h);
  c.kv_heads = g;
  c.seed = 11;
  return c;
}

// [SECTION] grouped heads in forward()

TEST_CASE("GQA: query heads read their group's K/V head through a stride-0 view, no copy") {
  const MhaConfig c = gqa(2, 5, 16, 4, 2);
  const MhaWeights w = init_weights(c.d_model, true, c.seed, c.kv_dim());
  CHECK(w.W_K.weight.shape() == Dims{8, 16});  // (g·dk, d)
  CHECK(w.W_V.bias.shape() == Dims{8});
  const Trace t = forward(c, w, random_inputs(c)).trace;
  const std::vector<std::string> names = trace_step_names(true, false);
  REQUIRE(t.steps.size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) CHECK(t.steps[i].name == names[i]);
  CHECK(t.at("k_heads").out.shape() == Dims{2, 2, 5, 4});
  const Step& kg = t.at("k_grouped");
  CHECK(kg.kind == StepKind::View);
  CHECK(kg.out.shape() == Dims{2, 2, 2, 5, 4});
  CHECK(kg.out.strides()[2] == 0);
  CHECK(kg.new_bytes == 0);
  CHECK(kg.copied_bytes == 0);
  CHECK(kg.out.shares_storage_with(t.at("k_proj").out));
  CHECK(kg.storage_id == t.at("k_proj").storage_id);
  CHECK(t.at("scores").inputs[1] == "k_grouped");
  // the only copy of the pass is still ctx_contiguous
  int copies = 0;
  for (const Step& s : t.steps) copies += s.kind == StepKind::Copy;
  CHECK(copies == 1);
  // the fast grouped products equal their plain loops
  CHECK(max_abs_diff(t.at("scores").out, reference::qk_grouped(t.at("q_heads").out, kg.out)) < 1e-5);
  CHECK(max_abs_diff(t.at("ctx_heads").out, reference::av_grouped(t.at("alpha").out, t.at("v_grouped").out)) < 1e-5);
  CHECK(t.held_bytes() == predict_trace_bytes(c));
}

TEST_CASE("GQA: the repeat_interleave variant copies r times the K/V bytes and gives the same output") {
  MhaConfig c = gqa(2, 6, 24, 6, 2);  // r = 3
  const MhaWeights w = init_weights(c.d_model, true, c.seed, c.kv_dim());
  const MhaInputs in = random_inputs(c);
  const Trace view = forward(c, w, in).trace;
  c.kv_repeat_copy = true;
  const Trace copy = forward(c, w, in).trace;
  const Step& kg = copy.at("k_grouped");
  CHECK(kg.kind == StepKind::Copy);
  CHECK(kg.out.shape() == Dims{2, 6, 6, 4});
  CHECK(kg.copied_bytes == 2 * 6 * 6 * 4 * 4);  // B·h·T·dk floats
  CHECK(copy.at("v_grouped").copied_bytes == kg.copied_bytes);
  CHECK(copy.held_bytes() == view.held_bytes() + 2 * kg.copied_bytes);
  CHECK(copy.held_bytes() == predict_trace_bytes(c));
  CHECK(max_abs_diff(copy.at("out").out, view.at("out").out) < 1e-6);
}

TEST_CASE("GQA equals MHA whose K/V heads are repeated per group") {
  const int64_t h = 4, g = 2, r = h / g, d = 16, dk = d / h;
  MhaConfig c = gqa(1, 7, d, h, g);
  c.mask = parse_mask_spec("causal");
  const MhaWeights w = init_weights(d, true, c.seed, c.kv_dim());
  MhaWeights full = w;  // W_K / W_V rows of head i = rows of group i / r
  for (Linear* lin : {&full.W_K, &full.W_V}) {
    const Linear& src = lin == &full.W_K ? w.W_K : w.W_V;
    Tensor weight = Tensor::empty({d, d}), bias = Tensor::empty({d});
    for (int64_t i = 0; i < h; ++i)
      for (int64_t row = 0; row < dk; ++row) {
        for (int64_t col = 0; col < d; ++col) weight.f32()[(i * dk + row) * d + col] = src.weight.at({(i / r) * dk + row, col});
        bias.f32()[i * dk + row] = src.bias.at({(i / r) * dk + row});
      }
    *lin = Linear{weight, bias};
  }
  MhaConfig m = c;
  m.kv_heads = 0;
  const MhaInputs in = random_inputs(c);
  CHECK(max_abs_diff(forward(c, w, in).trace.at("out").out, forward(m, full, in).trace.at("out").out) < 1e-5);
}

TEST_CASE("MQA: one K/V head for every query head") {
  const MhaConfig c = gqa(1, 4, 16, 4, 1);
  const Trace t = forward(c, init_weights(16, true, c.seed, c.kv_dim()), random_inputs(c)).trace;
  CHECK(t.at("k_heads").out.shape() == Dims{1, 1, 4, 4});
  CHECK(t.at("k_grouped").out.shape() == Dims{1, 1, 4, 4, 4});
  CHECK(t.at("k_grouped").out.strides()[2] == 0);
}

TEST_CASE("kv-heads must divide heads") {
  MhaConfig c = gqa(1, 4, 24, 6, 4);
  CHECK_THROWS_WITH(validate(c), Catch::Contains("heads 6 is not divisible by kv-heads 4"));
  c.kv_heads = -1;
  CHECK_THROWS_WITH(validate(c), Catch::Contains("kv-heads must not be negative"));
  c.kv_heads = 0;
  CHECK_NOTHROW(validate(c));
}

// [SECTION] one layer over a contiguous cache

// x (B,T,d) through the layer: prefill `prefill` rows, then one row at a time; the outs
// concatenated along T.
static Tensor decode_rows(const MhaConfig& c, const MhaWeights& w, const Tensor& x, int64_t prefill,
                          KvCache& cache, std::vector<Trace>* traces = nullptr) {
  const int64_t B = x.size(0), T = x.size(1), d = x.size(2);
  Tensor out = Tensor::empty({B, T, d});
  int64_t pos = 0;
  while (pos < T) {
    const int64_t n = pos == 0 ? prefill : 1;
    const Trace t = attend_cached(c, w, cache, x.narrow(1, pos, n).contiguous());
    const Tensor o = t.at("out").out;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t e = 0; e < d; ++e) out.f32()[(b * T + pos + i) * d + e] = o.at({b, i, e});
    if (traces) traces->push_back(t);
    pos += n;
  }
  return out;
}

TEST_CASE("decoding token by token gives the full causal forward's outputs, with and without GQA") {
  for (int64_t g : {4, 2, 1}) {
    MhaConfig c = gqa(2, 9, 32, 4, g);
    c.mask = parse_mask_spec("causal");
    const MhaWeights w = init_weights(c.d_model, true, c.seed, c.kv_dim());
    const MhaInputs in = random_inputs(c);
    const Tensor full = forward(c, w, in).trace.at("out").out;  // (B,T,d)
    for (int64_t prefill : {1, 4, 8}) {  // the last call is always a one-row step
      KvCache cache(2, g, c.head_dim(), 12);
      std::vector<Trace> traces;
      const Tensor dec = decode_rows(c, w, in.query, prefill, cache, &traces);
      INFO("g=" << g << " prefill=" << prefill);
      CHECK(max_abs_diff(dec, full) < kDecodeBound);
      // the last decode step: one query row against every cached key
      const Trace& last = traces.back();
      CHECK(last.at("q_heads").out.shape() == Dims{2, 4, 1, 8});
      CHECK(last.at("scores").out.shape() == Dims{2, 4, 1, 9});
      CHECK(last.at("alpha").out.shape() == Dims{2, 4, 1, 9});
      CHECK(last.at("mask").skipped());
      CHECK(last.at("k_cache").out.shape() == Dims{2, g, 9, 8});
      CHECK(last.at("k_cache").out.shares_storage_with(cache.k_storage()));
      CHECK(last.at("k_cache").new_bytes == 0);
      CHECK(last.at("k_cache_append").kind == StepKind::Copy);
      CHECK(last.at("k_cache_append").new_bytes == 0);  // the storage was there before
      CHECK(last.at("k_cache_append").copied_bytes == 2 * g * 8 * 4);  // B·g·dk floats
      CHECK(last.at("k_cache_append").out.shares_storage_with(cache.k_storage()));
      CHECK(last.steps.size() == trace_step_names(g < 4, true).size());
      if (g < 4) {
        CHECK(last.at("k_grouped").out.strides()[2] == 0);
        CHECK(last.at("k_grouped").out.shares_storage_with(cache.k_storage()));
      }
    }
  }
}

TEST_CASE("the cache is one preallocated storage whose bytes equal the cost model's formula") {
  const int64_t B = 3, h = 8, g = 2, d = 64, dk = d / h, t_max = 20;
  const MhaConfig c = gqa(B, 1, d, h, g);
  const MhaWeights w = init_weights(d, true, 1, c.kv_dim());
  KvCache cache(B, g, dk, t_max);
  const Tensor x = random_inputs(gqa(B, 7, d, h, g)).query;
  const int64_t storage_id = cache.k_storage().storage()->id;
  decode_rows(c, w, x, 3, cache);
  CHECK(cache.k_storage().storage()->id == storage_id);  // never reallocated
  CostConfig cc;
  cc.d_model = d, cc.heads = h, cc.kv_heads = g, cc.batch = B, cc.layers = 1, cc.seq = t_max;
  const Cost cost = compute_cost(cc);
  CHECK(cache.storage_bytes() == cost.kv_cache_bytes_grouped);
  CHECK(cache.storage_bytes() == 2 * B * g * t_max * dk * 4);
  CHECK(cost.kv_bytes_per_token == 2 * g * dk * 4);
  cc.seq = cache.filled();  // the filled part, the narrow view's bytes, is the formula at t
  CHECK(cache.k().nbytes() + cache.v().nbytes() == compute_cost(cc).kv_cache_bytes_grouped);
  CHECK(cache.k().nbytes() + cache.v().nbytes() == B * 7 * cost.kv_bytes_per_token);
}

// [SECTION] policies

TEST_CASE("the policies keep exactly the positions they promise") {
  CHECK(kept_positions(parse_cache_policy("full"), 5) == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(kept_positions(parse_cache_policy("window=3"), 10) == std::vector<int64_t>{7, 8, 9});
  CHECK(kept_positions(parse_cache_policy("sink=2,window=3"), 10) == std::vector<int64_t>{0, 1, 7, 8, 9});
  CHECK(kept_positions(parse_cache_policy("sink=2,window=3"), 4) == std::vector<int64_t>{0, 1, 2, 3});
  for (const char* spec : {"full", "window=4", "sink=1,window=3", "sink=3,window=2"}) {
    const CachePolicy p = parse_cache_policy(spec);
    KvCache cache(1, 1, 2, 16, p);
    for (int64_t t = 1; t <= 16; ++t) {
      const Tensor row = Tensor::from_values({1, 1, 1, 2}, {static_cast<float>(t - 1), -1.0f});  // value = position
      const KvCache::Written wr = cache.append(row, row);
      std::vector<int64_t> held = cache.slot_positions();
      std::sort(held.begin(), held.end());
      INFO(spec << " t=" << t);
      CHECK(held == kept_positions(p, t));
      CHECK(wr.k.shares_storage_with(cache.k_storage()));
      for (int64_t s = 0; s < cache.filled(); ++s)  // each slot holds the row of its position
        CHECK(cache.k().at({0, 0, s, 0}) == static_cast<float>(cache.slot_positions()[s]));
    }
    CHECK(cache.slots() == p.slots(16));
  }
}

TEST_CASE("a windowed cache decodes like the forward pass with the evicted keys masked") {
  for (const char* spec : {"window=4", "sink=2,window=3"}) {
    StackConfig sc;
    sc.attn = gqa(1, 1, 32, 4, 2);
    sc.layers = 2;
    sc.t_max = 14;
    sc.policy = parse_cache_policy(spec);
    Decoder dec(sc, {encode_text("Hello, world")});
    std::vector<Tensor> rows{dec.prefill().hidden[0]};
    while (dec.length() < 14) rows.push_back(dec.step().hidden[0]);
    const Tensor ref = dec.full_forward(0);  // (14,d)
    int64_t at = 0;
    double worst = 0;
    for (const Tensor& r : rows)
      for (int64_t i = 0; i < r.size(0); ++i, ++at)
        worst = std::max(worst, max_abs_diff(r.narrow(0, i, 1), ref.narrow(0, at, 1)));
    INFO(spec);
    CHECK(at == 14);
    CHECK(worst < 2 * kDecodeBound);
    CHECK(dec.caches()[0].slots() == sc.policy.slots(14));
  }
}

TEST_CASE("bad decode input: one clear line each") {
  CHECK_THROWS_WITH(parse_cache_policy("window=0"), Catch::Contains("at least one position"));
  CHECK_THROWS_WITH(parse_cache_policy("last=3"), Catch::Contains("unknown cache policy 'last=3'"));
  CHECK_THROWS_WITH(parse_cache_policy("sink=2"), Catch::Contains("has a sink but no window"));
  CHECK_THROWS_WITH(check_policy(parse_cache_policy("window=40"), 32), Catch::Contains("window 40 is larger than T_max 32"));
  CHECK_THROWS_WITH(BlockPool(4, 0), Catch::Contains("block size must be positive, got 0"));
  StackConfig sc;
  sc.attn = gqa(1, 1, 16, 4, 4);
  sc.t_max = 4;
  CHECK_THROWS_WITH(Decoder(sc, {encode_text("hello")}), Catch::Contains("prompt of 5 tokens is longer than T_max 4"));
  sc.attn.kv_heads = 3;
  CHECK_THROWS_WITH(Decoder(sc, {encode_text("hi")}), Catch::Contains("not divisible by kv-heads 3"));
  sc.attn.kv_heads = 0;
  CHECK_THROWS_WITH(Decoder(sc, {encode_text("hi"), encode_text("hey")}), Catch::Contains("use --cache paged"));
  KvCache cache(1, 1, 2, 2);
  const Tensor row = Tensor::zeros({1, 1, 1, 2});
  cache.append(row, row);
  cache.append(row, row);
  CHECK_THROWS_WITH(cache.append(row, row), Catch::Contains("past T_max 2"));
}

// [SECTION] the stack, contiguous and paged

TEST_CASE("a two-layer stack decodes like the full causal forward, and paged equals contiguous") {
  for (int64_t g : {4, 2, 1}) {
    StackConfig sc;
    sc.attn = gqa(1, 1, 32, 4, g);
    sc.layers = 2;
    sc.t_max = 24;
    Decoder contiguous(sc, {encode_text("abc"), encode_text("xyz")});
    sc.block_size = 4;
    Decoder paged(sc, {encode_text("abc"), encode_text("xyz")});
    auto same = [](const DecodeStep& a, const DecodeStep& b) {
      double worst = 0;
      for (size_t s = 0; s < a.hidden.size(); ++s) worst = std::max(worst, max_abs_diff(a.hidden[s], b.hidden[s]));
      return worst;
    };
    CHECK(same(contiguous.prefill(), paged.prefill()) < 2 * kDecodeBound);
    for (int i = 0; i < 10; ++i) {
      const DecodeStep a = contiguous.step(), b = paged.step();
      CHECK(same(a, b) < 2 * kDecodeBound);
      CHECK(a.next == b.next);
    }
    for (int64_t s = 0; s < 2; ++s) {
      CHECK(contiguous.tokens(s) == paged.tokens(s));
      CHECK(paged.tables()[s].length == 13);
      CHECK(paged.tables()[s].blocks.size() == 4);  // ceil(13 / 4)
      // the gathered blocks are the contiguous cache's rows (layer 1 reads layer 0's rounding)
      CHECK(max_abs_diff(paged.pools()[1].gather_k(paged.tables()[s], 13),
                         contiguous.caches()[1].k().narrow(0, s, 1)) < 2 * kDecodeBound);
    }
  }
}

TEST_CASE("the stack's outputs equal the full forward over all it fed") {
  StackConfig sc;
  sc.attn = gqa(1, 1, 32, 4, 2);
  sc.layers = 2;
  sc.t_max = 16;
  Decoder dec(sc, {encode_text("The cat")});
  std::vector<Tensor> rows{dec.prefill().hidden[0]};
  for (int i = 0; i < 8; ++i) rows.push_back(dec.step().hidden[0]);
  const Tensor ref = dec.full_forward(0);
  CHECK(ref.size(0) == 15);
  CHECK(max_abs_diff(rows[0], ref.narrow(0, 0, 7)) < 2 * kDecodeBound);
  for (int i = 1; i <= 8; ++i) CHECK(max_abs_diff(rows[i], ref.narrow(0, 6 + i, 1)) < 2 * kDecodeBound);
  CHECK(decode_text(dec.tokens(0)).substr(0, 7) == "The cat");
}

TEST_CASE("paged: blocks on demand from the free list, waste under one block per sequence") {
  StackConfig sc;
  sc.attn = gqa(1, 1, 16, 4, 2);
  sc.layers = 3;
  sc.t_max = 32;
  sc.block_size = 8;
  const std::vector<std::string> prompts{"a", "0123456789", "abcdefghijklmnopq"};  // 1, 10, 17
  std::vector<std::vector<int64_t>> tokens;
  for (const auto& p : prompts) tokens.push_back(encode_text(p));
  Decoder dec(sc, tokens);
  CHECK(dec.block_pool().blocks() == 3 * 4);  // enough for every sequence at T_max
  CHECK(dec.block_pool().in_use() == 0);
  dec.prefill();
  // blocks are handed out in order as sequences need them: 1 + 2 + 3
  CHECK(dec.tables()[0].blocks == std::vector<int64_t>{0});
  CHECK(dec.tables()[1].blocks == std::vector<int64_t>{1, 2});
  CHECK(dec.tables()[2].blocks == std::vector<int64_t>{3, 4, 5});
  CHECK(dec.block_pool().free_list() == std::vector<int64_t>{6, 7, 8, 9, 10, 11});
  for (int i = 0; i < 7; ++i) dec.step();  // lengths 8, 17, 24: sequence 1 takes one more block
  CHECK(dec.tables()[1].blocks == std::vector<int64_t>{1, 2, 6});
  CostConfig cc;
  cc.d_model = 16, cc.heads = 4, cc.kv_heads = 2, cc.layers = 3;
  const PagedWaste waste = paged_waste(cc, {8, 17, 24}, 8, 32);
  CHECK(waste.blocks == 1 + 3 + 3);
  CHECK(waste.used_bytes == dec.cache_used_bytes());
  CHECK(waste.used_bytes == (8 + 17 + 24) * compute_cost(cc).kv_bytes_per_token);
  // the real pool storage: blocks · block · per-token bytes, all layers
  CHECK(dec.cache_storage_bytes() == 12 * 8 * compute_cost(cc).kv_bytes_per_token);
  CHECK(waste.paged_bytes == dec.block_pool().in_use() * 8 * compute_cost(cc).kv_bytes_per_token);
  CHECK(waste.contiguous_bytes == 3 * 32 * compute_cost(cc).kv_bytes_per_token);
  // the trace reads the pool in place
  const DecodeStep st = dec.step();
  const Trace& t = st.traces[1][0];
  CHECK(t.at("k_cache").out.shares_storage_with(dec.pools()[0].k_pool()));
  CHECK(t.at("k_cache_append").copied_bytes == 2 * 4 * 4);  // g·dk floats
  CHECK(t.at("scores").out.shape() == Dims{1, 4, 1, 18});
  CHECK(t.at("k_grouped").skipped());
  BlockPool pool(2, 4);
  BlockTable table;
  reserve_blocks(pool, table, 8);
  CHECK_THROWS_WITH(reserve_blocks(pool, table, 9), Catch::Contains("all 2 blocks of 4 positions are in use"));
  release_blocks(pool, table);
  CHECK(pool.free_list() == std::vector<int64_t>{0, 1});
}
