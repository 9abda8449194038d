// The fixed-order product and fixed_math against their definitions: sgemm_fixed equals,
// bit for bit, a plain loop that sums k in order with every product rounded; it is as
// close to a double-precision product as sgemm; the thread count never changes it; and the
// fixed exp / log / cos stay within a few ulp of libm, with IEEE's special cases.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "engine/fixed_math.h"
#include "engine/gemm.h"
#include "engine/gemm_fixed.h"
#include "engine/parallel.h"
#include "engine/random.h"

using namespace attnsim;

namespace {

struct Case {
  Op a, b;
  int64_t m, n, k;
  float alpha, beta;
};

std::vector<float> randoms(int64_t n, uint64_t stream) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = random_normal(7, stream, static_cast<uint64_t>(i));
  return v;
}

// The definition in gemm_fixed.h, one output at a time.
void in_order(const Case& c, const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc) {
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < c.k; ++p) {
        const float x = c.a == Op::N ? A[i * lda + p] : A[p * lda + i];
        const float y = c.b == Op::N ? B[p * ldb + j] : B[j * ldb + p];
        const float prod = x * y;
        acc = acc + prod;
      }
      float& out = C[i * ldc + j];
      out = c.beta == 0.0f ? c.alpha * acc : c.alpha * acc + c.beta * out;
    }
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("sgemm_fixed equals the in-order loop bit for bit", "[gemm_fixed]") {
  // sizes with remainders against the 6-row blocks and 4/8/16-wide panels, both ops, the
  // training shapes (1536 rows; k = 1536 for a weight gradient), alpha / beta variants
  const Case cases[] = {{Op::N, Op::N, 1, 1, 1, 1.0f, 0.0f},      {Op::N, Op::T, 7, 13, 5, 1.0f, 0.0f},
                        {Op::T, Op::N, 13, 33, 17, 0.5f, 1.0f},   {Op::T, Op::T, 6, 16, 3, 1.0f, 2.0f},
                        {Op::N, Op::T, 48, 48, 16, 1.0f, 0.0f},   {Op::N, Op::N, 48, 16, 48, 1.0f, 0.0f},
                        {Op::N, Op::T, 1536, 192, 64, 1.0f, 1.0f}, {Op::T, Op::N, 64, 64, 1536, 1.0f, 1.0f},
                        {Op::N, Op::N, 5, 100, 0, 1.0f, 0.0f}};
  for (const Case& c : cases) {
    CAPTURE(c.m, c.n, c.k, c.a == Op::T, c.b == Op::T, c.alpha, c.beta);
    const int64_t ar = c.a == Op::N ? c.m : c.k, ac = c.a == Op::N ? c.k : c.m;
    const int64_t br = c.b == Op::N ? c.k : c.n, bc = c.b == Op::N ? c.n : c.k;
    const int64_t lda = ac + 3, ldb = bc + 1, ldc = c.n + 2;  // leading dimensions past the width
    const std::vector<float> A = randoms(ar * lda, 1), B = randoms(br * ldb, 2), C0 = randoms(c.m * ldc, 3);
    std::vector<float> want = C0, got = C0;
    in_order(c, A.data(), lda, B.data(), ldb, want.data(), ldc);
    sgemm_fixed(c.a, c.b, c.m, c.n, c.k, c.alpha, A.data(), lda, B.data(), ldb, c.beta, got.data(), ldc);
    CHECK(same_bits(got, want));

    // through sgemm under the guard: the same; and within float rounding of a double product
    std::vector<float> guarded = C0;
    {
      const FixedOrderProducts fixed;
      sgemm(c.a, c.b, c.m, c.n, c.k, c.alpha, A.data(), lda, B.data(), ldb, c.beta, guarded.data(), ldc);
    }
    CHECK(same_bits(guarded, want));
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double exact = 0, mag = 0;
        for (int64_t p = 0; p < c.k; ++p) {
          const double x = c.a == Op::N ? A[i * lda + p] : A[p * lda + i];
          const double y = c.b == Op::N ? B[p * ldb + j] : B[j * ldb + p];
          exact += x * y;
          mag += std::fabs(x * y);
        }
        exact = c.alpha * exact + (c.beta == 0.0f ? 0.0 : c.beta * C0[i * ldc + j]);
        REQUIRE(std::fabs(got[i * ldc + j] - exact) <= 1e-6 * (c.k + 1) * (mag + std::fabs(C0[i * ldc + j]) + 1));
      }
  }
}

TEST_CASE("sgemm_fixed: the thread count never changes a bit; beta = 0 never reads C", "[gemm_fixed]") {
  const int64_t m = 1536, n = 192, k = 64;
  const std::vector<float> A = randoms(m * k, 4), B = randoms(n * k, 5);
  std::vector<float> parallel(m * n), serial(m * n, std::numeric_limits<float>::quiet_NaN());
  sgemm_fixed(Op::N, Op::T, m, n, k, 1.0f, A.data(), k, B.data(), k, 0.0f, parallel.data(), n);
  // inside a worker every parallel_for runs on that one thread
  run_workers(1, [&](int) { sgemm_fixed(Op::N, Op::T, m, n, k, 1.0f, A.data(), k, B.data(), k, 0.0f, serial.data(), n); });
  CHECK(same_bits(parallel, serial));
}

TEST_CASE("FixedOrderProducts reaches the engine's workers and no other thread", "[gemm_fixed]") {
  CHECK_FALSE(fixed_order_products());
  std::vector<int> seen(4, -1);
  {
    const FixedOrderProducts fixed;
    parallel_for(4, 1, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) seen[i] = fixed_order_products();
    });
    std::thread other([&] { seen[0] = fixed_order_products() ? 2 : 3; });
    other.join();
  }
  CHECK(seen == std::vector<int>{3, 1, 1, 1});
  CHECK_FALSE(fixed_order_products());
}

TEST_CASE("fixed exp, log and cos: within a few ulp of libm, IEEE special cases", "[fixed_math]") {
  for (int i = -7000; i <= 7000; ++i) {
    const double x = i * 0.1013;
    CAPTURE(x);
    REQUIRE(fixed::exp(x) == Approx(std::exp(x)).epsilon(4e-16));
    const double y = std::exp(x * 0.1);
    REQUIRE(fixed::log(y) == Approx(std::log(y)).epsilon(4e-16).margin(1e-16));
  }
  for (int i = 0; i <= 1000; ++i) {
    const double x = i * 6.283185307179586 / 1000;
    REQUIRE(fixed::cos(x) == Approx(std::cos(x)).margin(2e-15));
  }
  CHECK(fixed::exp(-800.0) == 0.0);
  CHECK(std::isinf(fixed::exp(800.0)));
  CHECK(std::isnan(fixed::exp(std::nan(""))));
  CHECK(fixed::exp(-1000.5) == 0.0);
  CHECK(fixed::exp(-740.0) == Approx(std::exp(-740.0)).epsilon(1e-10));  // subnormal
  CHECK(fixed::log(1.0) == 0.0);
  CHECK(std::isinf(fixed::log(0.0)));
  CHECK(std::isnan(fixed::log(-1.0)));
  CHECK(fixed::log(1e-310) == Approx(std::log(1e-310)).epsilon(1e-15));  // subnormal input
}

TEST_CASE("fixed exp_shifted_sum: float exp within 2 ulp, the tail padded, -inf and NaN kept", "[fixed_math]") {
  std::vector<float> x(37), y(37);
  for (int64_t j = 0; j < 37; ++j) x[j] = -90.0f + 2.6f * static_cast<float>(j);  // -90 .. 3.6
  x[5] = -std::numeric_limits<float>::infinity();
  const float sum = fixed::exp_shifted_sum(x.data(), 1.0f, y.data(), 37);
  double want_sum = 0;
  for (int64_t j = 0; j < 37; ++j) {
    const double want = std::exp(static_cast<double>(x[j]) - 1.0);
    want_sum += want < 0x1p-126 ? 0.0 : want;
    CAPTURE(j, x[j]);
    if (want < 0x1p-126) CHECK(y[j] == 0.0f);  // flushed, as documented
    const float wf = static_cast<float>(want), ulp = std::nextafter(wf, INFINITY) - wf;
    if (want >= 0x1p-126) CHECK(std::fabs(y[j] - want) <= 2.0 * ulp);
  }
  CHECK(sum == Approx(want_sum).epsilon(1e-6));
  x[7] = std::numeric_limits<float>::quiet_NaN();
  (void)fixed::exp_shifted_sum(x.data(), 0.0f, y.data(), 37);
  CHECK(std::isnan(y[7]));
  CHECK(y[5] == 0.0f);
}
