// Weights packed once (engine/packed_weights.h) against the plain loop, and the CPU backend's
// use of them: the packed product only outside FixedOrderProducts, a weight held packed only
// refused there. In a build that packs nothing (packed_weights_none.cpp) the packing tests
// check that it says so.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/backend.h"
#include "engine/error.h"
#include "engine/gemm_fixed.h"
#include "engine/packed_weights.h"
#include "engine/random.h"

using namespace attnsim;

namespace {

std::vector<float> values(int64_t n, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(random_bits(seed, 3, static_cast<uint64_t>(i)) % 2001) / 1000.0f - 1.0f;
  return v;
}

// y = x·Wᵀ + b in double, with the bound on any float summation order (FMA or not) of the
// in products and the bias: |error| <= (in + 1) · 2^-24 · (Σ|x·w| + |b|), and one rounding more.
struct Plain {
  std::vector<double> y, bound;
};
Plain plain_linear(const std::vector<float>& x, const std::vector<float>& w, const float* b, int64_t m, int64_t out,
                   int64_t in) {
  Plain p;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double acc = b ? b[o] : 0.0, mag = b ? std::fabs(b[o]) : 0.0;
      for (int64_t i = 0; i < in; ++i) {
        const double t = static_cast<double>(x[static_cast<size_t>(r * in + i)]) * w[static_cast<size_t>(o * in + i)];
        acc += t;
        mag += std::fabs(t);
      }
      p.y.push_back(acc);
      p.bound.push_back(static_cast<double>(in + 2) * std::ldexp(1.0, -24) * mag + 1e-30);
    }
  return p;
}

}  // namespace

TEST_CASE("a packed linear matches the plain loop for odd shapes with and without a bias") {
  if (!packing_available()) {
    CHECK(packed_weight_bytes(5, 3) == 0);
    CHECK_THROWS_AS(pack_weight(nullptr, 5, 3), Error);
    return;
  }
  // out not a multiple of any block (5, 17, 50), in odd (3, 33, 129), GPT-2's 768 wide
  const std::vector<std::pair<int64_t, int64_t>> shapes{{5, 3}, {17, 33}, {64, 7}, {50, 129}, {96, 768}};
  for (const auto& [out, in] : shapes) {
    const std::vector<float> w = values(out * in, 1 + static_cast<uint64_t>(out)), bias = values(out, 7);
    const std::shared_ptr<const PackedWeight> p = pack_weight(w.data(), out, in);
    CHECK(p->out() == out);
    CHECK(p->in() == in);
    CHECK(p->bytes() == packed_weight_bytes(out, in));
    CHECK(p->bytes() >= out * in * 4);
    for (int64_t m : {1, 3, 64}) {
      const std::vector<float> x = values(m * in, 11 + static_cast<uint64_t>(m));
      for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
        std::vector<float> y(static_cast<size_t>(m * out), std::numeric_limits<float>::quiet_NaN());  // overwritten
        p->linear(x.data(), m, b, y.data());
        const Plain want = plain_linear(x, w, b, m, out, in);
        int64_t bad = 0;
        for (size_t i = 0; i < y.size(); ++i) bad += !(std::fabs(y[i] - want.y[i]) <= want.bound[i]);
        INFO("out " << out << " in " << in << " m " << m << (b ? " with bias" : " no bias"));
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE("packed weight sizes from outside are checked before anything is packed") {
  if (!packing_available()) return;
  const float w = 1.0f;
  CHECK_THROWS_WITH(pack_weight(&w, 0, 3), Catch::Contains("packed weight rows (out) 0 is out of range"));
  CHECK_THROWS_WITH(pack_weight(&w, 3, -1), Catch::Contains("packed weight columns (in) -1 is out of range"));
  CHECK_THROWS_WITH(packed_weight_bytes(int64_t{1} << 40, 3), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(packed_weight_bytes(INT32_MAX, INT32_MAX), Catch::Contains("does not fit in 64 bits"));
  const std::vector<float> w2 = values(6, 1);
  const auto p = pack_weight(w2.data(), 2, 3);
  float y[2];
  CHECK_THROWS_WITH(p->linear(w2.data(), 0, nullptr, y), Catch::Contains("packed linear rows 0 is out of range"));
}

TEST_CASE("the CPU backend runs a packed Linear outside training and the fixed-order sgemm inside it") {
  Backend& be = cpu_backend();
  const int64_t out = 19, in = 37;
  const std::vector<float> wv = values(out * in, 3), bv = values(out, 4), xv = values(2 * 5 * in, 5);
  const Tensor w = Tensor::from_values({out, in}, wv), b = Tensor::from_values({out}, bv);
  const Tensor x = Tensor::from_values({2, 5, in}, xv);  // (B,T,in)
  const Tensor plain = be.linear(x, w, b);               // sgemm
  if (!packing_available()) {
    CHECK(be.linear(x, Linear{w, b}).to_vector() == plain.to_vector());
    return;
  }
  const Linear both{w, b, pack_weight(wv.data(), out, in)}, packed_only{Tensor(), b, both.packed};
  const Tensor y = be.linear(x, packed_only);
  REQUIRE(y.shape() == Dims{2, 5, out});
  const Plain want = plain_linear(xv, wv, bv.data(), 10, out, in);
  for (int64_t i = 0; i < y.numel(); ++i) CHECK(std::fabs(y.f32()[i] - want.y[static_cast<size_t>(i)]) <= want.bound[static_cast<size_t>(i)]);
  CHECK_THROWS_WITH(be.linear(Tensor::from_values({1, 1, 3}, {1, 2, 3}), packed_only),
                    Catch::Contains("against a packed weight (19, 37)"));
  // a training step: the packed product is never used, so the bits are sgemm_fixed's
  const FixedOrderProducts fixed;
  CHECK(be.linear(x, both).to_vector() == be.linear(x, w, b).to_vector());
  CHECK_THROWS_WITH(be.linear(x, packed_only), Catch::Contains("cannot read a weight held only in packed form"));
}
