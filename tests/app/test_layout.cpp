// Layouts: every element gets exactly one cell, and the kinds place heads where a learner
// expects them (bands side by side, stacked blocks, a grid of score matrices).
#include <catch2/catch.hpp>

#include <set>

#include "views/layout.h"
#include "views/transition.h"

using namespace attnsim;
using namespace attnsim::app;

namespace {

// Every element sits in its own atlas cell and the atlas maps back to it.
void check_one_cell_each(const Layout& l) {
  std::set<std::pair<int64_t, int64_t>> cells;
  for (int64_t e = 0; e < l.numel(); ++e) {
    const Place& p = l.places[static_cast<size_t>(e)];
    const Block& b = l.blocks[static_cast<size_t>(p.block)];
    REQUIRE(p.row < b.rows);
    REQUIRE(p.col < b.cols);
    const auto cell = std::make_pair(b.atlas_row + p.row, static_cast<int64_t>(p.col));
    REQUIRE(cells.insert(cell).second);
    REQUIRE(l.atlas_element[static_cast<size_t>(cell.first * l.atlas_cols + cell.second)] == e);
    const Rect r = l.rect(e);
    REQUIRE(l.hit(r.x + 0.5f, r.y + 0.5f) == e);
  }
}

}  // namespace

TEST_CASE("a (T, d) matrix puts token t on row t and feature j in column j") {
  const Tensor x = Tensor::zeros({2, 6, 16});  // (B, T, d)
  const Layout l = make_layout(LayoutKind::Matrix, x, 1);
  REQUIRE(l.shape == Dims{6, 16});
  REQUIRE(l.blocks.size() == 1);
  check_one_cell_each(l);
  REQUIRE(l.rect(3 * 16 + 5).x == 5.0f);
  REQUIRE(l.rect(3 * 16 + 5).y == 3.0f);
  // batch element 1 starts one (T, d) slice into the storage
  REQUIRE(l.storage[0] == 6 * 16);
}

TEST_CASE("view (T, h, dk) splits the d axis into h bands with gaps") {
  const Tensor x = Tensor::zeros({1, 6, 16}).view({1, 6, 4, 4});  // view
  const Layout l = make_layout(LayoutKind::Bands, x, 0);
  REQUIRE(l.blocks.size() == 4);
  check_one_cell_each(l);
  // element (t=2, head=3, j=1): band 3, row 2, col 1
  const int64_t e = 2 * 16 + 3 * 4 + 1;
  REQUIRE(l.places[e].block == 3);
  REQUIRE(l.places[e].row == 2);
  REQUIRE(l.places[e].col == 1);
  REQUIRE(l.rect(e).x == Approx(3 * (4 + kBandGap) + 1));
}

TEST_CASE("transpose (h, T, dk) stacks head blocks top to bottom") {
  const Tensor x = Tensor::zeros({1, 6, 16}).view({1, 6, 4, 4}).transpose(1, 2);  // view
  const Layout l = make_layout(LayoutKind::Stacked, x, 0);
  REQUIRE(l.shape == Dims{4, 6, 4});
  check_one_cell_each(l);
  const Rect r = l.rect(2 * 24 + 1 * 4 + 3);  // head 2, token 1, j 3
  REQUIRE(r.x == 3.0f);
  REQUIRE(r.y == Approx(2 * (6 + kBlockGap) + 1));
  // a transposed view reads storage out of order: head 1, token 0 is storage 4
  REQUIRE(l.storage[24] == 4);
}

TEST_CASE("scores (h, Tq, Tk) form a grid of head blocks; a mask is one block") {
  const Layout scores = make_layout(LayoutKind::HeadGrid, Tensor::zeros({1, 8, 5, 7}), 0);
  REQUIRE(scores.blocks.size() == 8);
  check_one_cell_each(scores);
  const Layout mask = make_layout(LayoutKind::HeadGrid, Tensor::zeros({1, 1, 5, 7}, DType::Bool), 0);
  REQUIRE(mask.blocks.size() == 1);
  REQUIRE(mask.width == 7.0f);
}

TEST_CASE("atlas values follow the layout, read through the strides") {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i);
  const Tensor x = Tensor::from_values({1, 4, 6}, v).view({1, 4, 2, 3}).transpose(1, 2);
  const Layout l = make_layout(LayoutKind::Stacked, x, 0);
  const auto atlas = atlas_values(l, x);
  // head 1 block starts at atlas row 4; its (token 0, j 0) is x[0, 0, 1, 0] = 3
  REQUIRE(atlas[4 * 3 + 0] == 3.0f);
  REQUIRE(atlas[(4 + 2) * 3 + 1] == 2 * 6 + 3 + 1);
}

TEST_CASE("steps get the layout of their shape") {
  REQUIRE(layout_for_step("q_proj") == LayoutKind::Matrix);
  REQUIRE(layout_for_step("q_view") == LayoutKind::Bands);
  REQUIRE(layout_for_step("k_heads") == LayoutKind::Stacked);
  REQUIRE(layout_for_step("alpha") == LayoutKind::HeadGrid);
  REQUIRE(layout_for_step("mask") == LayoutKind::HeadGrid);
  REQUIRE(layout_for_step("ctx_transposed") == LayoutKind::Bands);
  REQUIRE(layout_for_step("ctx_concat") == LayoutKind::Matrix);
}

TEST_CASE("the article's 8 x 128-row stack wraps into columns, a small one does not") {
  const Tensor small = Tensor::zeros({1, 6, 16}).view({1, 6, 4, 4}).transpose(1, 2);
  const Layout s = make_layout(LayoutKind::Stacked, small, 0);
  for (const Block& b : s.blocks) REQUIRE(b.x == 0.0f);
  const Tensor big = Tensor::zeros({1, 128, 512}).view({1, 128, 8, 64}).transpose(1, 2);
  const Layout l = make_layout(LayoutKind::Stacked, big, 0);
  check_one_cell_each(l);
  REQUIRE(l.blocks[1].y > l.blocks[0].y);  // head 1 below head 0
  REQUIRE(l.width > 64.0f);                // more than one column
  REQUIRE(l.height < 8 * 128.0f);
}

TEST_CASE("a stride-0 group view lays out one block per query head, sharing its K head's storage") {
  // k (1, g=2, T=3, dk=2) -> k_grouped (1, 2, r=3, 3, 2) with stride 0 on r
  const Tensor k = Tensor::zeros({1, 2, 3, 2});
  const Tensor grouped = k.unsqueeze(2).expand({1, 2, 3, 3, 2});
  REQUIRE(grouped.strides()[2] == 0);
  const Layout l = make_layout(layout_for_step("k_grouped"), grouped, 0);
  CHECK(l.kind == LayoutKind::Stacked);
  CHECK(l.blocks.size() == 6);  // g·r query heads
  const Layout kl = make_layout(LayoutKind::Stacked, k, 0);
  // every element of query head 4 (group 1, member 1) sits on K head 1's storage
  for (int64_t e = 4 * 6; e < 5 * 6; ++e) {
    const int64_t s = l.storage[static_cast<size_t>(e)];
    CHECK(kl.index_of(kl.element_at_storage(s))[0] == 1);
  }
  // the transition from k to the group view matches every one of its 36 cells by storage
  int64_t cells = 0;
  for (const Segment& seg : match_by_storage(kl, l)) cells += seg.length;
  CHECK(cells == 36);
}
