// The page's packed weight product (packed_tile.h) run natively: the same panel layout and
// tile loops as packed_weights_simd128.cpp, with four plain floats standing in for a SIMD128
// vector. Each output sums bias + x·W in input order, mul then add, as reference::linear
// does, so the two must agree bit for bit on every shape: whole tiles of 4 rows and the last
// 1-3 rows (tiles of 4, 2 or 1 panels), whole and short panels (out % 8), with and without a
// bias, and on any split of the panels between threads.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <tuple>
#include <vector>

#include "engine/packed_tile.h"
#include "engine/random.h"
#include "engine/reference.h"

using namespace attnsim;

namespace {

// packed_tile.h's four lanes as an array: each lane rounds as a SIMD128 lane does.
struct ScalarLanes {
  struct reg {
    float v[4];
  };
  static reg load(const float* p) {
    reg r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
  }
  static void store(float* p, const reg& r) { std::memcpy(p, r.v, sizeof r.v); }
  static reg splat(const float* p) { return {{*p, *p, *p, *p}}; }
  static reg mul(const reg& a, const reg& b) { return {{a.v[0] * b.v[0], a.v[1] * b.v[1], a.v[2] * b.v[2], a.v[3] * b.v[3]}}; }
  static reg add(const reg& a, const reg& b) { return {{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2], a.v[3] + b.v[3]}}; }
};

Tensor normal(Dims shape, uint64_t stream) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = random_normal(11, stream, static_cast<uint64_t>(i));
  return t;
}

struct Product {
  Tensor x, w, b;  // (1,m,in), (out,in), (out) or undefined
  std::vector<float> panels;
};

Product product(int64_t m, int64_t out, int64_t in, bool bias) {
  Product p{normal({1, m, in}, 1), normal({out, in}, 2), bias ? normal({out}, 3) : Tensor(), {}};
  p.panels.resize(static_cast<size_t>(packed::packed_floats(out, in)));
  packed::pack_panels(p.w.f32(), out, in, p.panels.data());
  return p;
}

// y (m,out) through the tiles, panels [first, last) only; the other columns stay NaN.
std::vector<float> tiled(const Product& p, int64_t first, int64_t last) {
  const int64_t m = p.x.size(1), in = p.x.size(2), out = p.w.size(0);
  std::vector<float> y(static_cast<size_t>(m * out), NAN);
  packed::linear_panels<ScalarLanes>(p.panels.data(), out, in, p.x.f32(), m, p.b.defined() ? p.b.f32() : nullptr,
                                     y.data(), first, last);
  return y;
}

bool same_bits(const std::vector<float>& a, const Tensor& b) {
  return static_cast<int64_t>(a.size()) == b.numel() && std::memcmp(a.data(), b.f32(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("Packed panels hold each weight at its panel input and lane and zeros past the last column") {
  const int64_t out = 11, in = 3;
  std::vector<float> w(out * in);
  for (int64_t i = 0; i < out * in; ++i) w[i] = static_cast<float>(i + 1);
  std::vector<float> panels(static_cast<size_t>(packed::packed_floats(out, in)), NAN);
  packed::pack_panels(w.data(), out, in, panels.data());
  REQUIRE(panels.size() == 2u * 3u * 8u);
  for (int64_t c = 0; c < 16; ++c)
    for (int64_t k = 0; k < in; ++k) {
      const float want = c < out ? w[c * in + k] : 0.0f;
      REQUIRE(panels[((c / 8) * in + k) * 8 + c % 8] == want);
    }
}

TEST_CASE("The packed product equals reference linear bit for bit on every tile edge") {
  for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 9, 64})
    for (int64_t out : {1, 7, 8, 9, 24, 33, 40})
      for (int64_t in : {1, 3, 256, 600})
        for (bool bias : {false, true}) {
          const Product p = product(m, out, in, bias);
          const Tensor want = reference::linear(p.x, p.w, p.b);  // (1,m,out)
          INFO("m " << m << " out " << out << " in " << in << " bias " << bias);
          REQUIRE(same_bits(tiled(p, 0, packed::panel_count(out)), want));
        }
}

TEST_CASE("Threads splitting the panels write only their own columns and together the whole product") {
  // m 6: tiles of 4 rows, then of 2 rows and 2 panels; m 5: then 1 row and 4 panels, which a
  // split at panel 3 must not let reach across
  for (auto [m, out, split] : {std::tuple<int64_t, int64_t, int64_t>{6, 40, 2}, {5, 60, 3}}) {
    const Product p = product(m, out, 300, true);
    const Tensor want = reference::linear(p.x, p.w, p.b);
    const int64_t at = split * packed::kPanel;
    const std::vector<float> left = tiled(p, 0, split), right = tiled(p, split, packed::panel_count(out));
    std::vector<float> joined(static_cast<size_t>(m * out));
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < out; ++c) {
        const size_t i = static_cast<size_t>(r * out + c);
        REQUIRE(std::isnan(c < at ? right[i] : left[i]));  // the other task's columns untouched
        joined[i] = c < at ? left[i] : right[i];
      }
    REQUIRE(same_bits(joined, want));
  }
}

TEST_CASE("A packed product with no inputs is its bias") {
  const Product p = product(3, 5, 0, true);
  const std::vector<float> y = tiled(p, 0, 1);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 5; ++c) REQUIRE(y[r * 5 + c] == p.b.f32()[c]);
  REQUIRE(tiled(product(2, 3, 0, false), 0, 1) == std::vector<float>(6, 0.0f));
}
