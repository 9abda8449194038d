// The CPU backend's attention core runs q·kᵀ, the softmax side, dropout and alpha·v per
// (batch, head); every tensor and count must equal the four ops run one after the other.
#include <catch2/catch.hpp>

#include "engine/backend.h"
#include "engine/mask.h"
#include "engine/random.h"
#include "helpers.h"

using namespace attnsim;
using attnsim::test::max_abs_diff;

namespace {

Tensor normal(const Dims& shape, float scale, uint64_t stream) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.f32()[i] = scale * random_normal(11, stream, static_cast<uint64_t>(i));
  return t;
}

void check_same(const Tensor& a, const Tensor& b) {
  REQUIRE(a.defined() == b.defined());
  if (!a.defined()) return;
  CHECK(a.shape() == b.shape());
  CHECK(max_abs_diff(a, b) == 0.0);  // bit for bit, NaN where NaN
}

void check_counts(const NonFinite& a, const NonFinite& b) {
  CHECK(a.nan == b.nan);
  CHECK(a.neginf == b.neginf);
  CHECK(a.posinf == b.posinf);
}

}  // namespace

TEST_CASE("the fused attention core equals qk, softmax side, dropout and av in turn", "[core]") {
  const int64_t B = 3, H = 2, Tq = 7, Tk = 9, dk = 5;
  // q, k, v as the transposed views the forward pass hands over: (B,T,h,dk) -> (B,h,T,dk)
  const Tensor q = normal({B, Tq, H, dk}, 2.0f, 1).transpose(1, 2);
  const Tensor k = normal({B, Tk, H, dk}, 2.0f, 2).transpose(1, 2);
  const Tensor v = normal({B, Tk, H, dk}, 1.0f, 3).transpose(1, 2);
  MaskSpec padded = parse_mask_spec("causal,key-padding=9:4:6,query-padding=7:7:2");
  const Tensor mask = build_mask(padded, B, Tq, Tk).expand({B, H, Tq, Tk});  // hides whole rows: NaN
  struct Case {
    const char* what;
    SoftmaxSpec spec;
    float dropout;
  };
  SoftmaxSpec plain, masked, additive, finite, no_max;
  plain.scale = masked.scale = additive.scale = finite.scale = 0.5f;
  masked.mask = additive.mask = finite.mask = mask;
  additive.additive = true;
  finite.fill = -1e9f;
  no_max.fp16_no_max = true;  // a bug mode the fused path hands to the plain ops
  for (const Case& c : {Case{"no mask", plain, 0.0f}, Case{"mask with NaN rows", masked, 0.0f},
                        Case{"mask, dropout", masked, 0.3f}, Case{"additive bug", additive, 0.0f},
                        Case{"finite fill, dropout", finite, 0.5f}, Case{"fp16 without max", no_max, 0.0f}}) {
    SECTION(c.what) {
      Backend& be = cpu_backend();
      const AttentionCore fused = be.attention_core(q, k, v, c.spec, c.dropout, 42);
      const AttentionCore apart = be.Backend::attention_core(q, k, v, c.spec, c.dropout, 42);
      check_same(fused.scores, apart.scores);
      check_same(fused.softmax.scaled, apart.softmax.scaled);
      check_same(fused.softmax.masked, apart.softmax.masked);
      check_same(fused.softmax.alpha, apart.softmax.alpha);
      check_same(fused.dropped, apart.dropped);
      check_same(fused.ctx, apart.ctx);
      REQUIRE(fused.softmax.counted == apart.softmax.counted);
      check_counts(fused.softmax.scaled_counts, apart.softmax.scaled_counts);
      check_counts(fused.softmax.masked_counts, apart.softmax.masked_counts);
      check_counts(fused.softmax.alpha_counts, apart.softmax.alpha_counts);
      if (c.spec.mask.defined() && !c.spec.additive && c.spec.fill < -1e30f)
        CHECK(fused.softmax.alpha_counts.nan > 0);  // the padded query rows
    }
  }
}
