// The decode panel's run, without a window: one frame per call, the snapshots the panel
// draws, the paged tables, and the sinks drift.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <variant>

#include "views/decode_figure.h"
#include "views/decode_run.h"
#include "views/decode_slides.h"
#include "figure/slide.h"
#include "engine/error.h"
#include "engine/scenario.h"
#include "model/formats/checkpoint.h"
#include "model/experiments/decode.h"
#include "model/formats/checkpoint_text.h"
#include "model/pass/generate.h"
#include "model/text/tokenizer.h"

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
    if (g < s.config.heads) CHECK(last.traces[0].at("k_grouped").out.strides()[2] == 0);
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

TEST_CASE("decode: each call's new K and V rows land in their slots and alpha rows sum to 1") {
  const DecodeRun run = run_decode(find_scenario("decode-gqa"));
  const Tensor& last = run.frames.back().k_cache[0];  // (g, t, dk), layer 0
  const Tensor& last_v = run.frames.back().v_cache[0];
  for (size_t i = 1; i < run.frames.size(); ++i) {
    const DecodeFrame& f = run.frames[i];
    REQUIRE(f.append_slots.size() == 1);
    const Tensor& kh = f.traces[0].at("k_heads").out;  // (1, g, 1, dk)
    const Tensor& vh = f.traces[0].at("v_heads").out;
    for (int64_t j = 0; j < kh.size(1); ++j)
      for (int64_t c = 0; c < kh.size(3); ++c) {
        CHECK(last.at({j, f.append_slots[0], c}) == kh.at({0, j, 0, c}));
        CHECK(last_v.at({j, f.append_slots[0], c}) == vh.at({0, j, 0, c}));
      }
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
      CHECK(strips == 2 * s.config.kv_group_count());  // K and V
      CHECK(alphas == run.config.layers);              // every layer's alpha
    }
}

namespace {

// The decode view of `frame` as the panel builds it: one layer's alpha, inside w x h units.
figure::Figure panel_view(const DecodeRun& run, size_t frame, int64_t layer, float flight, float w, float h,
                          DecodeLayout* layout = nullptr) {
  figure::Figure f;
  f.width = w, f.height = h;
  DecodeFigureSpec spec;
  spec.run = &run;
  spec.frame = frame;
  spec.cache_layer = layer;
  spec.flight = flight;
  const DecodeLayout l = add_decode_view(f, figure::print_theme(), {0, 0, w, h}, spec);
  if (layout) *layout = l;
  return f;
}

std::vector<const figure::Heatmap*> heatmaps(const figure::Figure& f, int64_t rows, int64_t cols) {
  std::vector<const figure::Heatmap*> out;
  for (const auto& item : f.items)
    if (const auto* hm = std::get_if<figure::Heatmap>(&item))
      if (hm->rows == rows && (cols < 0 || hm->cols == cols)) out.push_back(hm);
  return out;
}

}  // namespace

TEST_CASE("decode view: the panel's figure fits any panel, its strips are the cache, no label overlaps") {
  for (const char* name : {"decode", "decode-gqa", "decode-mqa", "decode-paged", "decode-sink"}) {
    const Scenario& s = find_scenario(name);
    const DecodeRun run = run_decode(s);
    const int64_t G = s.config.kv_group_count(), dk = s.config.head_dim();
    for (const auto& [w, h] : {std::pair{1900.0f, 1300.0f}, std::pair{2400.0f, 760.0f}})
      for (size_t frame : {size_t{0}, run.frames.size() - 1}) {
        INFO(name << " " << w << "x" << h << " call " << frame);
        DecodeLayout l;
        const figure::Figure f = panel_view(run, frame, 1, 1.0f, w, h, &l);
        CHECK(figure::overlapping_texts(f).empty());
        CHECK(figure::texts_outside(f).empty());
        CHECK(l.bottom <= h);
        // K over V per group, every filled slot, the values of layer 1's cache
        const DecodeFrame& fr = run.frames[frame];
        const int64_t filled = fr.k_cache[1].size(1);
        const auto strips = heatmaps(f, dk, filled);
        REQUIRE(strips.size() == static_cast<size_t>(2 * G));
        for (int64_t j = 0; j < G; ++j)
          for (int64_t kv = 0; kv < 2; ++kv) {
            const Tensor& c = kv == 0 ? fr.k_cache[1] : fr.v_cache[1];
            const figure::Heatmap& hm = *strips[static_cast<size_t>(2 * j + kv)];
            for (int64_t e : {int64_t{0}, dk - 1})
              for (int64_t t : {int64_t{0}, filled - 1})
                CHECK(hm.values[static_cast<size_t>(e * filled + t)] == c.at({j, t, e}));
          }
        CHECK(heatmaps(f, s.config.heads, filled).size() == 1);  // one layer's alpha
      }
  }
  const DecodeRun run = run_decode(find_scenario("decode-gqa"));
  figure::Figure f;
  DecodeFigureSpec spec;
  spec.run = &run;
  spec.frame = run.frames.size();
  CHECK_THROWS_WITH(add_decode_view(f, figure::print_theme(), {0, 0, 100, 100}, spec), Catch::Contains("outside"));
  spec.frame = 0;
  spec.cache_layer = 2;
  CHECK_THROWS_WITH(add_decode_view(f, figure::print_theme(), {0, 0, 100, 100}, spec), Catch::Contains("layer 2"));
}

TEST_CASE("decode view: mid-call the new K and V rows fly from their token into the slot that holds it") {
  // decode-sink after its window rolled: the slot is found by storage index through the append
  // view, and must be the slot the call's snapshot says holds the position.
  const Scenario& s = find_scenario("decode-sink");
  const DecodeRun run = run_decode(s);
  const int64_t G = s.config.kv_group_count(), dk = s.config.head_dim();
  // (a slot in the middle of the strip, so that the strip is two runs of several slots)
  auto rolled = [&](const DecodeFrame& f) {
    const int64_t slot = slot_of(f, f.first_position);
    return f.first_position >= run.slots && slot >= 2 && slot <= f.k_cache[0].size(1) - 3;
  };
  size_t frame = 1;
  while (frame < run.frames.size() && !rolled(run.frames[frame])) ++frame;
  REQUIRE(frame < run.frames.size());
  const DecodeFrame& fr = run.frames[frame];
  const int64_t slot = slot_of(fr, fr.first_position);
  REQUIRE(slot != fr.first_position);  // the window rolled: slot and position differ
  const Tensor& k_new = fr.traces[0].find("k_heads")->out;  // (1, g, 1, dk)
  DecodeLayout l;
  const figure::Figure mid = panel_view(run, frame, 0, 0.5f, 1900, 1300, &l);
  const auto flying = heatmaps(mid, dk, 1);
  REQUIRE(flying.size() == static_cast<size_t>(2 * G));  // K and V of each group
  for (int64_t j = 0; j < G; ++j)
    for (int64_t c = 0; c < dk; ++c) CHECK(flying[static_cast<size_t>(j)]->values[static_cast<size_t>(c)] == k_new.at({0, j, 0, c}));
  // the landing slot is empty until the row lands: the strip is drawn around it
  const int64_t filled = fr.k_cache[0].size(1);
  int64_t cols = 0;
  for (const figure::Heatmap* hm : heatmaps(mid, dk, -1)) cols += hm->cols == 1 ? 0 : hm->cols;
  CHECK(cols == 2 * G * (filled - 1));
  // almost landed: over its slot of the strip
  const figure::Figure late = panel_view(run, frame, 0, 0.999f, 1900, 1300);
  const float cell = l.strips.w / static_cast<float>(run.slots);
  CHECK(heatmaps(late, dk, 1)[0]->rect.x == Approx(l.strips.x + static_cast<float>(slot) * cell).margin(1.0));
  // landed: no row in flight, every slot in its strip
  CHECK(heatmaps(panel_view(run, frame, 0, 1.0f, 1900, 1300), dk, 1).empty());
}

namespace {

const std::string kModelDir = std::string(ATTNSIM_SOURCE_DIR) + "/assets/models/induction";

std::string text_of(const DecodeRun& run, const std::vector<int64_t>& tokens) {
  std::string s;
  for (int64_t t : tokens) s += run.label(t) == "·" ? " " : run.label(t);
  return s;
}

}  // namespace

TEST_CASE("decode-model: the trained model completes the repeat, token for token as `attnsim-cli decode --model`") {
  const Scenario& s = find_scenario("decode-model");
  REQUIRE(s.decode.trained);
  CHECK_THROWS_AS(stack_config_for(s), Error);  // the engine alone has no checkpoint
  const DecodeRun run = run_decode(s, "", kModelDir);
  REQUIRE(run.trained);
  CHECK(run.config.attn.d_model == 128);
  CHECK(run.config.attn.heads == 4);
  REQUIRE(run.frames.size() == 1 + static_cast<size_t>(s.decode.steps));
  CHECK(run.frames[0].rows == 1 + static_cast<int64_t>(s.decode.prompts[0].size()));  // BOS + prompt
  // BOS, the string, its first three letters, then the model writes the rest of the repeat
  CHECK(text_of(run, run.frames.back().tokens) == "^qwertyuiopasdfghqwertyuiopasdfg");
  CHECK(run.label(run.frames.back().next) == "h");

  const std::string out = (std::filesystem::temp_directory_path() / "attnsim-app-test-decode-model.json").string();
  const std::string cmd = std::string(ATTNSIM_CLI) + " decode --json --model '" + kModelDir + "' --prompt '" +
                          s.decode.prompts[0] + "' --steps " + std::to_string(s.decode.steps) + " > '" + out + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  nlohmann::json j;
  std::ifstream(out) >> j;
  CHECK(j["text"][0].get<std::string>() == text_of(run, run.frames.back().tokens));
  REQUIRE(j["steps"].size() == run.frames.size());
  for (size_t i = 0; i < run.frames.size(); ++i) {
    INFO("call " << i);
    CHECK(j["steps"][i]["next"][0].get<int64_t>() == run.frames[i].next);
    CHECK(j["steps"][i]["first_position"].get<int64_t>() == run.frames[i].first_position);
  }
}

TEST_CASE("decode-model: on the repeat, a layer-1 head puts most of its weight on the slot after the earlier copy") {
  const DecodeRun run = run_decode(find_scenario("decode-model"), "", kModelDir);
  const int64_t last_layer = run.config.layers - 1;
  int checked = 0;
  for (size_t i = 1; i < run.frames.size(); ++i) {
    const DecodeFrame& f = run.frames[i];
    INFO("call " << i << " at position " << f.first_position);
    // "qwertyuiopasdfgh" then "qwe...": every token fed after the prefill was seen 16 places back
    REQUIRE(f.copy_source == f.first_position - 16 + 1);
    const Tensor& al = f.alpha[static_cast<size_t>(last_layer)];  // (h, t): slot = position (full cache)
    float best = 0;
    for (int64_t h = 0; h < al.size(0); ++h) {
      int64_t arg = 0;
      for (int64_t t = 1; t < al.size(1); ++t)
        if (al.at({h, t}) > al.at({h, arg})) arg = t;
      if (arg == f.copy_source) best = std::max(best, al.at({h, arg}));
    }
    CHECK(best > 0.5f);
    // and the prediction is the token that followed the earlier copy
    CHECK(f.next == f.tokens[static_cast<size_t>(f.copy_source)]);
    ++checked;
  }
  CHECK(checked == find_scenario("decode-model").decode.steps);
}

TEST_CASE("decode-model-sinks: keeping BOS holds the loss where a plain window of the same size loses it") {
  const Scenario& s = find_scenario("decode-model-sinks");
  const DecodeRun run = run_decode(s, "", kModelDir);
  REQUIRE(run.trained);
  CHECK(run.slots == 16);
  CHECK(run.window_text == "window=16");
  const size_t T = run.frames.back().tokens.size();
  CHECK(T == 48);
  REQUIRE(run.loss_full.size() == T - 1);
  REQUIRE(run.loss_policy.size() == T - 1);
  REQUIRE(run.loss_window.size() == T - 1);
  // nothing evicted yet: every policy sees every key (positions 0..15 fit in 16 slots)
  for (size_t p = 0; p < 16; ++p) {
    CHECK(run.loss_policy[p] == Approx(run.loss_full[p]).margin(1e-3));
    CHECK(run.loss_window[p] == Approx(run.loss_full[p]).margin(1e-3));
  }
  double full = 0, sink = 0, window = 0;
  for (size_t p = 16; p < T - 1; ++p) full += run.loss_full[p], sink += run.loss_policy[p], window += run.loss_window[p];
  const double n = static_cast<double>(T - 1 - 16);
  INFO("mean loss from position 16: full " << full / n << ", sink=1,window=15 " << sink / n << ", window=16 " << window / n);
  CHECK(window / n > sink / n + 0.5);            // evicting BOS hurts
  CHECK(std::abs(sink - full) / n < 0.25);       // keeping it holds the full cache's loss
  // the drift plot's lines are the same runs: zero drift before the first eviction
  for (size_t p = 0; p < 16; ++p) CHECK(run.drift_policy[p] < 1e-4);
}

TEST_CASE("decode-model-sinks slides plot the loss by position: the drawn points are model::eviction_losses'") {
  const Scenario& s = find_scenario("decode-model-sinks");
  const DecodeRun run = run_decode(s, "", kModelDir);
  // The same losses computed apart from the run: the checkpoint's stack under the preset's
  // policy, every fed token teacher-forced (model/decode.h).
  const model::Model m = model::load_checkpoint(kModelDir);
  const model::ScenarioStack st = model::scenario_stack(m, s.decode);
  const model::EvictionLosses ev = model::eviction_losses(st.config, st.weights, run.frames.back().tokens);
  REQUIRE(ev.from == 16);
  REQUIRE(ev.full.size() == 47);
  // a drawn point mapped back through the plot's axes
  auto value_at = [](const figure::PlotLayout& L, float x, float y) {
    return std::pair<double, double>{L.x_lo + (x - L.axes.x) / L.axes.w * (L.x_hi - L.x_lo),
                                     L.y_lo + (L.axes.bottom() - y) / L.axes.h * (L.y_hi - L.y_lo)};
  };
  for (const size_t frame : {size_t{0}, size_t{20}, run.frames.size() - 1}) {
    INFO("decode call " << frame);
    const DecodeSlide slide = decode_slide(s, run, frame, lessons::Lang::En, "print");
    REQUIRE(slide.plot.has_value());
    const figure::PlotLayout& L = *slide.plot;
    REQUIRE(L.series_lines.size() == 3);  // full, window=16, sink=1,window=15
    const std::vector<double>* want[] = {&ev.full, &ev.window, &ev.policy};
    // points up to the call's last position (the prefill: positions 0..15)
    const size_t points = std::min(ev.full.size(), run.frames[frame].tokens.size());
    for (size_t k = 0; k < 3; ++k) {
      REQUIRE(L.series_lines[k].second == points - 1);
      for (size_t i = 0; i + 1 < points; ++i) {
        const auto& ln = std::get<figure::Line>(slide.figure.items[L.series_lines[k].first + i]);
        const auto a = value_at(L, ln.x1, ln.y1), b = value_at(L, ln.x2, ln.y2);
        CHECK(a.first == Approx(static_cast<double>(i)).margin(1e-3));
        CHECK(a.second == Approx((*want[k])[i]).margin(2e-3));
        CHECK(b.first == Approx(static_cast<double>(i + 1)).margin(1e-3));
        CHECK(b.second == Approx((*want[k])[i + 1]).margin(2e-3));
      }
    }
    // the first eviction marked at position 16; the legend gives each mean from there
    const auto& marker = std::get<figure::Line>(slide.figure.items[L.marker_lines.at(0)]);
    CHECK(value_at(L, marker.x1, marker.y1).first == Approx(16.0).margin(1e-3));
    std::set<std::string> texts;
    for (const auto& item : slide.figure.items)
      if (const auto* t = std::get_if<figure::Text>(&item)) texts.insert(t->text);
    char full[32], window[32], sink[48];
    std::snprintf(full, sizeof full, "full: %.2f", ev.mean_full);
    std::snprintf(window, sizeof window, "window=16: %.2f", ev.mean_window);
    std::snprintf(sink, sizeof sink, "sink=1,window=15: %.2f", ev.mean_policy);
    CHECK(texts.count(full) == 1);
    CHECK(texts.count(window) == 1);
    CHECK(texts.count(sink) == 1);
    if (frame + 1 == run.frames.size())  // the caption's first line: which positions the 16 slots hold, as ranges
      CHECK(std::any_of(texts.begin(), texts.end(), [](const std::string& t) {
        return t.find("16 slots hold positions 0, 33–47.") != std::string::npos;
      }));
    CHECK(figure::overlapping_texts(slide.figure).empty());
    CHECK(figure::texts_outside(slide.figure).empty());
  }
  // A plain window policy is its own comparison: two lines, full and the window.
  const DecodeRun window = run_decode(s, "window=16", kModelDir);
  const DecodeSlide w = decode_slide(s, window, window.frames.size() - 1, lessons::Lang::Ko, "print");
  REQUIRE(w.plot.has_value());
  CHECK(w.plot->series_lines.size() == 2);
  // no evicting policy, no plot
  CHECK_FALSE(decode_slide(s, run_decode(s, "full", kModelDir), 0, lessons::Lang::En, "print").plot.has_value());
}

// The language model on the decode stack (issue 45): its blocks' norms and MLP run around each
// cached call, and what it writes is what the whole pass and model::generate write.
TEST_CASE("decode-lm: the language model decodes word pieces over its KV caches, as generate() does") {
  const Scenario& s = find_scenario("decode-lm");
  REQUIRE(s.decode.trained);
  const DecodeRun run = run_decode(s);
  CHECK(run.model_dir == model::shipped_models_dir() + "/wordnet-lm-s1");
  REQUIRE(run.frames.size() == 1 + static_cast<size_t>(s.decode.steps));
  const model::Model lm = model::load_checkpoint(run.model_dir);
  const model::CheckpointText text = model::checkpoint_text(run.model_dir, lm.config);
  const std::vector<int32_t> prompt = text.encode(s.decode.prompts[0]);
  CHECK(run.prompt_length == static_cast<int64_t>(prompt.size()));
  CHECK(run.frames[0].rows == run.prompt_length);  // the prompt's word pieces in one call
  CHECK(run.label(prompt[2]) == "·act");
  // every layer's trace is the pass's block around the cached call
  for (const char* step : {"norm_attn", "k_cache_append", "alpha", "mlp_act", "resid_mlp"})
    CHECK(run.frames.back().traces[3].find(step) != nullptr);
  // greedy, as generate() over the whole pass's caches
  const std::vector<int32_t> want = model::generate(lm, prompt, s.decode.steps + 1, model::SamplingOptions{});
  std::vector<int32_t> got(run.frames.back().tokens.begin(), run.frames.back().tokens.end());
  got.push_back(static_cast<int32_t>(run.frames.back().next));
  CHECK(got == want);
  // the panel's figure: the text line, no label overlapping another
  const figure::Figure f = panel_view(run, run.frames.size() - 1, 3, 1.0f, 1200, 700);
  CHECK(figure::overlapping_texts(f).empty());
  bool text_line = false;
  for (const auto& item : f.items)
    if (const auto* t = std::get_if<figure::Text>(&item)) text_line = text_line || t->text.find("the act of moving") != std::string::npos;
  CHECK(text_line);
}
