// GELU (gelu_new) and SiLU clamp their exponent to [-80, 80] so the vector exp stays on its
// fast path: outputs at huge inputs stay within |x|·2e-35 of the double reference, and NaN and
// infinities come out as the unclamped formula gives them.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "engine/vector_exp.h"
#include "model/pass/pass_ops.h"

using namespace attnsim;
using namespace attnsim::model;

TEST_CASE("the exponent clamp keeps NaN and infinities and clamps finite values to 80") {
  std::vector<float> t = {-100, -80.5f, -80, 0, 79.9f, 80, 100, 1e30f, INFINITY, -INFINITY, NAN};
  clamp_exp_arguments(t.data(), static_cast<int64_t>(t.size()));
  const std::vector<float> want = {-80, -80, -80, 0, 79.9f, 80, 80, 80, INFINITY, -INFINITY};
  for (size_t i = 0; i < want.size(); ++i) CHECK(t[i] == want[i]);
  CHECK(std::isnan(t.back()));
}

TEST_CASE("GELU and SiLU at plus and minus 100 and beyond stay within |x| times 2e-35 of the reference") {
  const std::vector<float> x = {-1e20f, -1e4f, -100, -88, -80, -20, -1, 0, 1, 20, 80, 88, 100, 1e4f, 1e20f,
                                INFINITY, -INFINITY, NAN};
  for (Activation act : {Activation::GeluTanh, Activation::Silu}) {
    std::vector<float> fast = x, ref(x.size());
    activate(act, fast.data(), static_cast<int64_t>(fast.size()), fast.data());
    activate_reference(act, x.data(), static_cast<int64_t>(x.size()), ref.data());
    for (size_t i = 0; i < x.size(); ++i) {
      INFO("x " << x[i] << " fast " << fast[i] << " reference " << ref[i]);
      if (std::isnan(ref[i]) || std::isinf(ref[i])) {
        CHECK(std::isnan(fast[i]) == std::isnan(ref[i]));
        if (std::isinf(ref[i])) CHECK(fast[i] == ref[i]);
        continue;
      }
      CHECK(std::fabs(fast[i] - ref[i]) <= 1e-6 * std::fabs(ref[i]) + std::fabs(x[i]) * 2e-35);
    }
    CHECK(std::fabs(fast[2]) <= 2e-33);  // x = -100: -100 / (1 + e^80)
  }
}
