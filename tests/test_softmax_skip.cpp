// The softmax skips the hidden tail of each row (a causal mask's future keys, right padding):
// its alpha must be the whole row's, bit for bit, NaN rows included. The whole row is what the
// backend computes when a second, empty mask is given (the two-fills path never skips).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/backend.h"
#include "engine/mask.h"
#include "engine/random.h"
#include "engine/reference.h"
#include "helpers.h"

using namespace attnsim;

namespace {

Tensor random_tensor(const Dims& shape, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(random_bits(seed, 5, i) % 4001) / 500.0f - 4.0f;
  return Tensor::from_values(shape, v);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  const std::vector<float> va = a.to_vector(), vb = b.to_vector();
  return va.size() == vb.size() && std::memcmp(va.data(), vb.data(), va.size() * sizeof(float)) == 0;
}

// The spec with an all-false second mask: the same values, computed over whole rows.
SoftmaxSpec whole_rows(SoftmaxSpec spec) {
  spec.mask2 = Tensor::zeros(spec.mask.shape(), DType::Bool);
  return spec;
}

}  // namespace

TEST_CASE("the causal softmax skips hidden columns and equals the whole-row result bit for bit") {
  Backend& be = cpu_backend();
  for (auto [tq, tk] : {std::pair<int64_t, int64_t>{37, 37}, {70, 70}, {5, 70}, {1, 17}}) {
    const int64_t B = 2, H = 3;
    Tensor scores = random_tensor({B, H, tq, tk}, static_cast<uint64_t>(tq * 100 + tk));
    scores.f32()[3 * tk] = NAN;  // a visible NaN (column 0): row 3's alpha is NaN everywhere, hidden columns too
    SoftmaxSpec spec;
    spec.scale = 0.35f;
    spec.mask = build_causal_mask(B, tq, tk).expand({B, H, tq, tk});
    const SoftmaxSteps fast = be.scale_mask_softmax(scores, spec), whole = be.scale_mask_softmax(scores, whole_rows(spec));
    INFO("Tq " << tq << " Tk " << tk);
    CHECK(same_bits(fast.alpha, whole.alpha));
    CHECK(same_bits(fast.masked, whole.masked));
    CHECK(std::isnan(fast.alpha.f32()[3 * tk + tk - 1]));
    CHECK(fast.alpha_counts.nan == whole.alpha_counts.nan);
    CHECK(test::max_abs_diff(fast.alpha, reference::scale_mask_softmax(scores, spec).alpha) < 1e-6);
  }
}

TEST_CASE("the attention core skips the same columns and gives the same alpha and ctx bits") {
  Backend& be = cpu_backend();
  const int64_t B = 1, H = 2, T = 45, dk = 8;
  const Tensor q = random_tensor({B, H, T, dk}, 1), k = random_tensor({B, H, T, dk}, 2), v = random_tensor({B, H, T, dk}, 3);
  SoftmaxSpec spec;
  spec.scale = 1.0f / std::sqrt(8.0f);
  spec.mask = build_causal_mask(B, T, T).expand({B, H, T, T});
  const AttentionCore fast = be.attention_core(q, k, v, spec, 0.0f, 0), whole = be.attention_core(q, k, v, whole_rows(spec), 0.0f, 0);
  CHECK(same_bits(fast.softmax.alpha, whole.softmax.alpha));
  CHECK(same_bits(fast.ctx, whole.ctx));
}

TEST_CASE("a fully hidden row stays NaN and a finite fill is never skipped") {
  Backend& be = cpu_backend();
  const Tensor scores = random_tensor({1, 1, 3, 20}, 9);
  Tensor mask = Tensor::zeros({1, 1, 3, 20}, DType::Bool);
  for (int64_t j = 0; j < 20; ++j) mask.b8()[j] = 1;        // row 0: everything hidden
  for (int64_t j = 4; j < 20; ++j) mask.b8()[20 + j] = 1;   // row 1: a hidden tail
  SoftmaxSpec spec;
  spec.mask = mask;
  const SoftmaxSteps s = be.scale_mask_softmax(scores, spec);
  for (int64_t j = 0; j < 20; ++j) CHECK(std::isnan(s.alpha.f32()[j]));
  CHECK(same_bits(s.alpha, be.scale_mask_softmax(scores, whole_rows(spec)).alpha));
  spec.fill = -1e9f;  // the finite-fill bug: exp of the fill is not 0 everywhere, so no skipping
  CHECK(same_bits(be.scale_mask_softmax(scores, spec).alpha, be.scale_mask_softmax(scores, whole_rows(spec)).alpha));
  CHECK(test::max_abs_diff(be.scale_mask_softmax(scores, spec).alpha, reference::scale_mask_softmax(scores, spec).alpha) < 1e-6);
}
