// Transitions are matched by storage offset: a view or a transpose moves every element to
// the cell where the same memory shows up next; a copy matches by logical index.
#include <catch2/catch.hpp>

#include <set>

#include "views/transition.h"
#include "engine/mha.h"

using namespace attnsim;
using namespace attnsim::app;

namespace {

// Expands segments into (from cell, to cell) pairs in layout units.
std::vector<std::pair<Rect, Rect>> cells(const std::vector<Segment>& segs) {
  std::vector<std::pair<Rect, Rect>> out;
  for (const Segment& s : segs)
    for (int32_t i = 0; i < s.length; ++i)
      out.push_back({Rect{s.from.x + i, s.from.y, 1, 1}, Rect{s.to.x + i, s.to.y, 1, 1}});
  return out;
}

int64_t total_length(const std::vector<Segment>& segs) {
  int64_t n = 0;
  for (const Segment& s : segs) n += s.length;
  return n;
}

}  // namespace

TEST_CASE("view (T,d) -> (T,h,dk) moves each row piece into its head's band") {
  const Tensor proj = Tensor::zeros({1, 6, 16});   // q_proj (B, T, d)
  const Tensor view = proj.view({1, 6, 4, 4});      // q_view (B, T, h, dk), view
  const Layout a = make_layout(LayoutKind::Matrix, proj, 0);
  const Layout b = make_layout(LayoutKind::Bands, view, 0);
  const auto segs = match_by_storage(a, b);
  REQUIRE(total_length(segs) == 96);  // every element matched once
  REQUIRE(segs.size() == 6 * 4);       // one run per (token, head): dk cells stay together
  for (const auto& [from, to] : cells(segs)) {
    const int col = static_cast<int>(from.x);
    const int head = col / 4;
    REQUIRE(to.y == from.y);  // same token row
    REQUIRE(to.x == Approx(head * (4 + kBandGap) + col % 4));
  }
}

TEST_CASE("transpose (T,h,dk) -> (h,T,dk) moves bands into stacked blocks") {
  const Tensor view = Tensor::zeros({1, 6, 16}).view({1, 6, 4, 4});
  const Tensor heads = view.transpose(1, 2);  // view
  const Layout a = make_layout(LayoutKind::Bands, view, 0);
  const Layout b = make_layout(LayoutKind::Stacked, heads, 0);
  const auto segs = match_by_storage(a, b);
  REQUIRE(total_length(segs) == 96);
  for (const Segment& s : segs) {
    // band h, row t  ->  block h (stacked), row t
    const int head = static_cast<int>(s.from.x / (4 + kBandGap));
    REQUIRE(s.to.y == Approx(head * (6 + kBlockGap) + s.from.y));
  }
}

TEST_CASE("a view then its inverse view lands every element where it started") {
  const Tensor x = Tensor::zeros({2, 5, 12});
  const Tensor v = x.view({2, 5, 3, 4});
  for (int64_t b = 0; b < 2; ++b) {
    const Layout a = make_layout(LayoutKind::Matrix, x, b);
    const Layout mid = make_layout(LayoutKind::Bands, v, b);
    const Layout back = make_layout(LayoutKind::Matrix, v.view({2, 5, 12}), b);
    for (const auto& [from, to] : cells(match_by_storage(a, back))) {
      REQUIRE(from.x == to.x);
      REQUIRE(from.y == to.y);
    }
    REQUIRE(total_length(match_by_storage(a, mid)) == 60);
  }
}

TEST_CASE("contiguous is a new storage: matched by index, element i at new storage i") {
  const Tensor t = Tensor::zeros({1, 4, 6}).view({1, 4, 2, 3}).transpose(1, 2).contiguous();  // (B,h,T,dk)
  const Tensor tb = t.transpose(1, 2);                 // (B,T,h,dk) not contiguous, view
  const Tensor c = tb.contiguous();                    // copies
  REQUIRE_FALSE(tb.is_contiguous());
  REQUIRE_FALSE(c.shares_storage_with(tb));
  const Layout sa = make_layout(LayoutKind::Bands, tb, 0);
  const Layout sb = make_layout(LayoutKind::Bands, c, 0);
  const auto segs = match_by_index(sa, sb);
  REQUIRE(total_length(segs) == 24);
  // in the new storage the elements sit in logical order: storage i holds element i
  for (int64_t e = 0; e < 24; ++e) REQUIRE(sb.storage[e] == e);
}

TEST_CASE("product reveal runs from 0 to 1 line by line") {
  for (int rows : {1, 6, 128}) {
    REQUIRE(reveal(0, 0, rows, 4, 0.0f, false) == 0.0f);
    REQUIRE(reveal(rows - 1, 0, rows, 4, 1.0f, false) == 1.0f);
    REQUIRE(reveal(0, 0, rows, 4, 1.0f, false) == 1.0f);
    if (rows > 1) REQUIRE(reveal(0, 0, rows, 4, 0.5f, false) >= reveal(rows - 1, 0, rows, 4, 0.5f, false));
  }
  REQUIRE(reveal(0, 3, 6, 4, 1.0f, true) == 1.0f);
}

TEST_CASE("each step of a real forward pass gets the transition its op calls for") {
  MhaConfig c;  // 1 x 6 x 16, 4 heads
  c.mask.causal = true;
  const auto r = forward(c, init_weights(c.d_model, true, 0), random_inputs(c));
  auto kind = [&](const std::string& name) {
    const Step& s = r.trace.at(name);
    return transition_kind(r.trace.find(s.inputs.empty() ? "" : s.inputs[0]), s);
  };
  REQUIRE(kind("q_proj") == TransitionKind::Product);       // linear: columns form
  REQUIRE(kind("q_view") == TransitionKind::Rearrange);     // view: same storage
  REQUIRE(kind("q_heads") == TransitionKind::Rearrange);    // transpose: same storage
  REQUIRE(kind("scores") == TransitionKind::Product);       // q·kᵀ
  REQUIRE(kind("scores_scaled") == TransitionKind::Elementwise);
  REQUIRE(kind("mask") == TransitionKind::Appear);
  REQUIRE(kind("scores_masked") == TransitionKind::Elementwise);  // cells going dark
  REQUIRE(kind("alpha") == TransitionKind::Elementwise);          // rows normalised
  REQUIRE(kind("ctx_transposed") == TransitionKind::Rearrange);
  REQUIRE(kind("ctx_contiguous") == TransitionKind::Copy);        // new storage
  REQUIRE(kind("ctx_concat") == TransitionKind::Rearrange);
  REQUIRE(kind("out") == TransitionKind::Product);                // W_O reads all heads
}
