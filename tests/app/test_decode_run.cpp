// The decode panel's run, without a window: one frame per call, the snapshots the panel
// draws, the paged tables, and the sinks drift.
#include <catch2/catch.hpp>

#include <variant>

#include "app/decode_run.h"
#include "app/decode_slides.h"
#include "figure/slide.h"
#include "engine/scenario.h"

using namespace attnsim;
using namespace attnsim::app;

TEST_CASE("decode scenarios: a frame per call, the cache snapshot grows by one slot per step") {
  for (const char* name : {"decode", "decode-gqa", "decode-mqa"}) {
    const Scenario& s = find_scenario(name);
    const DecodeRun run = run_decode(s);
    INFO(name);
    REQUIRE(run.frames.size() == 1 + static_cast<size_t>(s.decode.steps));
    const int64_t g = s.config.kv_group_count(), prompt = static_cast<int64_t>(s.decode.prompts[0].size());
    CHECK(run.frames[0].rows == prompt);
    CHECK(run.frames[0].k_cache[0].shape() == Dims{g, prompt, s.config.head_dim()});
    const DecodeFrame& last = run.frames.back();
    CHECK(last.k_cache[1].shape() == Dims{g, prompt + s.decode.steps, s.config.head_dim()});
    CHECK(last.alpha[0].shape() == Dims{s.config.heads, prompt + s.decode.steps});
    CHECK(last.append_slots == std::vector<int64_t>{prompt + s.decode.steps - 1});
    if (g < s.config.heads) CHECK(last.layer0.at("k_grouped").out.strides()[2] == 0);
  }
  // the memory story: MHA holds 8/g times the GQA cache
  CHECK(run_decode(find_scenario("decode")).storage_bytes == 4 * run_decode(find_scenario("decode-gqa")).storage_bytes);
  CHECK(run_decode(find_scenario("decode")).storage_bytes == 8 * run_decode(find_scenario("decode-mqa")).storage_bytes);
}

TEST_CASE("decode-paged: three sequences share the pool; tables and free list per frame") {
  const DecodeRun run = run_decode(find_scenario("decode-paged"));
  const DecodeFrame& first = run.frames.front();
  REQUIRE(first.tables.size() == 3);
  CHECK(first.tables[0].blocks == std::vector<int64_t>{0});        // "hi": 2 positions
  CHECK(first.tables[1].blocks == std::vector<int64_t>{1, 2, 3});  // "the cat sat": 11
  const DecodeFrame& last = run.frames.back();
  int64_t in_use = 0;
  for (const auto& t : last.tables) in_use += static_cast<int64_t>(t.blocks.size());
  CHECK(in_use + static_cast<int64_t>(last.free_list.size()) == run.slots / run.config.block_size);
}

TEST_CASE("decode-sink: the slots stay at S+W and the drift is zero until the first eviction") {
  const Scenario& s = find_scenario("decode-sink");
  const DecodeRun run = run_decode(s);
  CHECK(run.slots == 8);
  CHECK(run.frames.back().k_cache[0].size(1) == 8);
  REQUIRE(run.drift_policy.size() == run.frames.back().tokens.size());
  for (size_t p = 0; p < 8; ++p) CHECK(run.drift_policy[p] < 1e-5);  // nothing evicted yet
  CHECK(run.drift_policy.back() > 1e-3);
  CHECK(run.window_text == "window=8");
  CHECK(run_decode(s, "full").drift_policy.empty());
}

TEST_CASE("decode: each call's new K row lands in its slot and alpha rows sum to 1") {
  const DecodeRun run = run_decode(find_scenario("decode-gqa"));
  const Tensor& last = run.frames.back().k_cache[0];  // (g, t, dk), layer 0
  for (size_t i = 1; i < run.frames.size(); ++i) {
    const DecodeFrame& f = run.frames[i];
    REQUIRE(f.append_slots.size() == 1);
    const Tensor& kh = f.layer0.at("k_heads").out;  // (1, g, 1, dk)
    for (int64_t j = 0; j < kh.size(1); ++j)
      for (int64_t c = 0; c < kh.size(3); ++c)
        CHECK(last.at({j, f.append_slots[0], c}) == kh.at({0, j, 0, c}));
    for (int64_t h = 0; h < f.alpha[0].size(0); ++h) {
      double sum = 0;
      for (int64_t s = 0; s < f.alpha[0].size(1); ++s) sum += f.alpha[0].at({h, s});
      CHECK(sum == Approx(1.0).epsilon(1e-5));
    }
  }
}

TEST_CASE("decode slides: a title page and one slide per decode call, labels that do not overlap") {
  for (const char* name : {"decode-gqa", "decode-paged", "decode-sink"})
    for (const auto lang : {lessons::Lang::En, lessons::Lang::Ko}) {
      const Scenario& s = find_scenario(name);
      const Deck deck = decode_deck(s, lang, "print");
      INFO(name);
      REQUIRE(deck.pages.size() == 1 + run_decode(s).frames.size());
      CHECK(deck.pages[1].name == "01-prefill");
      for (const DeckPage& p : deck.pages) {
        INFO(p.name);
        CHECK(figure::overlapping_texts(p.figure).empty());
        CHECK(figure::texts_outside(p.figure).empty());
      }
      // the last call's slide: one (d_k x slots) strip per K/V head, one (h x slots) alpha
      const DecodeRun run = run_decode(s);
      const int64_t slots = run.frames.back().k_cache[0].size(1);
      int64_t strips = 0, alphas = 0;
      for (const auto& item : deck.pages.back().figure.items)
        if (const auto* hm = std::get_if<figure::Heatmap>(&item)) {
          strips += hm->rows == s.config.head_dim() && hm->cols == slots;
          alphas += hm->rows == s.config.heads && hm->cols == slots;
        }
      CHECK(strips == s.config.kv_group_count());
      CHECK(alphas == 1);
    }
}
