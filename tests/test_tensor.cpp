// Tensor layout: the properties PyTorch's semantics promise (minitorch-style invariants).
#include <catch2/catch.hpp>
#include <limits>
#include <numeric>
#include <set>

#include "engine/error.h"
#include "engine/tensor.h"
#include "engine/trace.h"
#include "helpers.h"

using namespace attnsim;

static Tensor arange(const Dims& shape) {
  std::vector<float> v(static_cast<size_t>(numel_of(shape)));
  std::iota(v.begin(), v.end(), 0.0f);
  return Tensor::from_values(shape, v);
}

TEST_CASE("every logical index of a view is visited once and maps to a distinct storage cell") {
  const Tensor x = arange({2, 3, 4, 5});
  for (const Tensor& v : {x, x.transpose(1, 2), x.permute({3, 1, 0, 2}), x.view({6, 20}).transpose(0, 1)}) {
    std::set<int64_t> cells;
    int64_t visits = 0;
    for_each_element(v, [&](int64_t i, int64_t pos) {
      CHECK(i == visits);
      cells.insert(pos);
      ++visits;
    });
    CHECK(visits == 120);
    CHECK(cells.size() == 120);
  }
}

TEST_CASE("permute then its inverse is the identity, with no copy") {
  const Tensor x = arange({2, 3, 4});
  const Tensor p = x.permute({2, 0, 1});
  CHECK(p.shape() == Dims{4, 2, 3});
  const Tensor back = p.permute({1, 2, 0});
  CHECK(back.shape() == x.shape());
  CHECK(back.strides() == x.strides());
  CHECK(back.shares_storage_with(x));
  CHECK(back.to_vector() == x.to_vector());
}

TEST_CASE("shape (5,3) with strides (1,5) is not contiguous") {
  const Tensor t = arange({3, 5}).transpose(0, 1);
  CHECK(t.shape() == Dims{5, 3});
  CHECK(t.strides() == Dims{1, 5});
  CHECK_FALSE(t.is_contiguous());
  CHECK(t.at({4, 2}) == 14.0f);  // storage[4·1 + 2·5]
}

TEST_CASE("contiguous() of a view equals the view everywhere and copies only when needed") {
  const Tensor x = arange({2, 3, 4});
  const Tensor t = x.transpose(0, 2);
  const Tensor c = t.contiguous();
  CHECK_FALSE(c.shares_storage_with(x));
  CHECK(c.is_contiguous());
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 2; ++k) CHECK(c.at({i, j, k}) == t.at({i, j, k}));
  CHECK(x.contiguous().shares_storage_with(x));  // already contiguous: same storage
}

TEST_CASE("view splits and merges dims without copying, as in split_heads") {
  const Tensor x = arange({2, 5, 8});       // (B,T,d)
  const Tensor v = x.view({2, 5, 4, 2});    // (B,T,h,dk)
  CHECK(v.strides() == Dims{40, 8, 2, 1});
  const Tensor h = v.transpose(1, 2);       // (B,h,T,dk)
  CHECK(h.strides() == Dims{40, 2, 8, 1});
  CHECK(h.shares_storage_with(x));
  CHECK_FALSE(h.is_contiguous());
  CHECK(h.at({1, 3, 2, 1}) == x.at({1, 2, 7}));
  CHECK(x.view({-1, 8}).shape() == Dims{10, 8});
}

TEST_CASE("view on the transposed context fails with PyTorch's reason, and reshape copies instead") {
  const Tensor ctx = arange({2, 4, 5, 3});  // (B,h,T,dk)
  const Tensor t = ctx.transpose(1, 2);     // (B,T,h,dk), not contiguous
  try {
    (void)t.view({2, 5, 12});
    FAIL("view should have failed");
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("view size is not compatible with input tensor's size and stride") != std::string::npos);
    CHECK(msg.find("(2, 5, 4, 3)") != std::string::npos);
  }
  const Tensor r = t.reshape({2, 5, 12});
  CHECK_FALSE(r.shares_storage_with(ctx));
  CHECK(r.to_vector() == t.contiguous().view({2, 5, 12}).to_vector());
  // A view that the strides can express is allowed even on a non-contiguous tensor.
  const Tensor base = arange({4, 6}).transpose(0, 1);  // (6,4) strides (1,6)
  const Tensor ok = base.view({3, 2, 4});
  CHECK(ok.strides() == Dims{2, 1, 6});
  CHECK(base.reshape({3, 2, 4}).shares_storage_with(base));  // a view when one exists
}

TEST_CASE("expand broadcasts with stride 0 and narrow moves the offset") {
  const Tensor m = arange({2, 1, 3, 3});
  const Tensor e = m.expand({2, 4, 3, 3});
  CHECK(e.strides()[1] == 0);
  CHECK(e.at({1, 3, 2, 1}) == m.at({1, 0, 2, 1}));
  CHECK_THROWS_AS(m.expand({3, 1, 3, 3}), Error);
  const Tensor n = arange({4, 6}).narrow(1, 2, 3);
  CHECK(n.offset() == 2);
  CHECK(n.at({1, 0}) == 8.0f);
  CHECK(broadcast_shapes({2, 1, 3, 4}, {2, 8, 3, 4}) == Dims{2, 8, 3, 4});
  CHECK_THROWS_WITH(broadcast_shapes({2, 3}, {4, 3}), Catch::Contains("cannot be broadcast"));
}

TEST_CASE("wrong view sizes are clear errors") {
  const Tensor x = arange({2, 6});
  CHECK_THROWS_WITH(x.view({5, 2}), Catch::Contains("is invalid for input of shape (2, 6)"));
  CHECK_THROWS_WITH(x.view({-1, -1}), Catch::Contains("only one dimension can be -1"));
  CHECK_THROWS_WITH(x.permute({0, 0}), Catch::Contains("not a permutation"));
}

TEST_CASE("prefaulted buffers wait in the pool and the next tensor of that size takes one") {
  // The pool may be full from earlier cases in this process: it then frees its oldest
  // buffers to make room, so the new one is kept either way.
  const int64_t n = int64_t{3} << 20;  // an odd size no other test allocates
  prefault_buffers({n + 4});
  const int64_t ready = pooled_buffer_bytes();
  CHECK(ready >= n + 4);
  {
    const Tensor t = Tensor::empty({(n + 4) / 4});  // (n + 4) bytes of float32
    CHECK(pooled_buffer_bytes() == ready - (n + 4));
  }
  CHECK(pooled_buffer_bytes() == ready);  // released back, not to the system
}

TEST_CASE("a full pool frees the buffers it kept longest, and never holds more than 1 GiB") {
  const int64_t big = (int64_t{1} << 30) / 4 + 8;  // four of them do not fit
  prefault_buffers({big, big + 4, big + 8, big + 12});
  CHECK(pooled_buffer_bytes() <= int64_t{1} << 30);
  {
    const int64_t full = pooled_buffer_bytes();
    const Tensor newest = Tensor::empty({(big + 12) / 4});  // the last one released is there
    const int64_t after = pooled_buffer_bytes();
    CHECK(after == full - (big + 12));
    const Tensor oldest = Tensor::empty({big / 4});  // the first was freed: a fresh buffer
    CHECK(pooled_buffer_bytes() == after);
  }
  prefault_buffers({(int64_t{1} << 30) + 4});  // larger than the pool: skipped
  CHECK(pooled_buffer_bytes() <= int64_t{1} << 30);
}

TEST_CASE("is_dense: permutations of a contiguous block, not slices or broadcasts") {
  const Tensor x = arange({2, 3, 4, 5});
  CHECK(x.is_dense());
  CHECK(x.transpose(1, 2).is_dense());
  CHECK(x.permute({3, 1, 0, 2}).is_dense());
  CHECK(x.view({6, 20}).transpose(0, 1).is_dense());
  CHECK_FALSE(x.narrow(3, 1, 3).is_dense());   // skips storage cells
  CHECK_FALSE(x.narrow(0, 1, 1).transpose(1, 2).is_contiguous());
  CHECK(x.narrow(0, 1, 1).transpose(1, 2).is_dense());  // the second half, permuted: offset 60
  CHECK_FALSE(arange({2, 1, 3}).expand({2, 4, 3}).is_dense());  // stride 0 repeats cells
}

TEST_CASE("count_nonfinite counts a view's own elements: dense permutations in one block, slices by index") {
  Tensor x = arange({4, 6});
  float* p = x.f32();
  p[1] = std::numeric_limits<float>::quiet_NaN();  // row 0
  p[7] = std::numeric_limits<float>::infinity();   // row 1
  p[20] = -std::numeric_limits<float>::infinity(); // row 3
  p[23] = -std::numeric_limits<float>::quiet_NaN();
  const NonFinite all = count_nonfinite(x.transpose(0, 1));
  CHECK((all.nan == 2 && all.posinf == 1 && all.neginf == 1));
  const NonFinite rows = count_nonfinite(x.narrow(0, 1, 2).transpose(0, 1));  // rows 1, 2
  CHECK((rows.nan == 0 && rows.posinf == 1 && rows.neginf == 0));
  const NonFinite cols = count_nonfinite(x.narrow(1, 1, 1));  // column 1: p[1], p[7], p[13], p[19]
  CHECK((cols.nan == 1 && cols.posinf == 1 && cols.neginf == 0));
}
