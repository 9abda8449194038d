// Animation frames (gif_scenes.h) carry the slide's labels: the tokens down the rows and the
// head names over the blocks, fading out with the old layout and in with the new one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <variant>

#include "views/gif_scenes.h"
#include "views/slide_scenes.h"
#include "engine/scenario.h"
#include "figure/slide.h"

using namespace attnsim;
using namespace attnsim::app;
namespace fig = attnsim::figure;

namespace {

// The label texts of a frame drawn in full colour (a fading label is a tint of the background).
std::vector<std::string> solid_labels(const fig::Figure& f) {
  const fig::Theme& th = fig::theme_by_name(f.theme);
  std::vector<std::string> out;
  for (const fig::Item& i : f.items)
    if (const auto* t = std::get_if<fig::Text>(&i); t && t->role == "label" && t->color == th.text)
      out.push_back(t->text);
  return out;
}

size_t count_of(const std::vector<std::string>& v, const std::string& s) {
  return static_cast<size_t>(std::count(v.begin(), v.end(), s));
}

}  // namespace

TEST_CASE("animation frames label the tokens and the heads, fade them across a move, and never overlap") {
  const Scenario& scenario = find_scenario("default");
  const auto run = compute_run(scenario);
  AnimationSpec spec;
  spec.from = "q_proj";
  spec.to = "q_view";
  spec.fps = 10;
  spec.seconds = 1;
  const Animation a = make_animation(scenario, *run, spec);
  REQUIRE(a.frames.size() == 10);
  const auto& tokens = run->q_tokens[static_cast<size_t>(scenario.focus_batch)];
  REQUIRE(tokens.size() == 6);
  // First frame: q_proj, one (T, d) matrix: the tokens down its rows, no head names yet.
  const auto first = solid_labels(a.frames.front());
  for (const auto& tok : tokens) CHECK(count_of(first, tok) == 1);
  CHECK(count_of(first, "head 0") == 0);
  // Last frame: q_view's h bands: every head named once, the tokens left of the first band.
  const auto last = solid_labels(a.frames.back());
  for (int h = 0; h < 4; ++h) CHECK(count_of(last, "head " + std::to_string(h)) == 1);
  for (const auto& tok : tokens) CHECK(count_of(last, tok) == 1);
  // Halfway the old labels have faded out and the new ones not yet in.
  for (const fig::Figure& f : a.frames) {
    CHECK(fig::overlapping_texts(f).empty());
    CHECK(fig::texts_outside(f).empty());
  }
  const auto mid = solid_labels(a.frames[a.frames.size() / 2]);
  CHECK(count_of(mid, tokens.front()) == 0);
  // Korean frames name heads in Korean.
  spec.lang = lessons::Lang::Ko;
  const auto ko = solid_labels(make_animation(scenario, *run, spec).frames.back());
  CHECK(count_of(ko, "헤드 0") == 1);
}
