// packed_weights.h in the page: the weight reordered once into column panels (packed_tile.h)
// and multiplied by a hand-written SIMD128 kernel, mul then add (relaxed-SIMD's FMA gained
// 1.07× and Debian's clang 14 emits its pre-standard opcode, which Chromium rejects).
// Against Eigen's GEBP (gemm_eigen.cpp), which packs the weight again on every call: about
// 1.6× on GPT-2's 64-row products, 2× on a decode step's single row (node's V8). The threaded
// page (tools/web.sh --threads) splits a product's panels over the engine's threads
// (parallel.h); the page opened from file:// has one thread.
#include <wasm_simd128.h>

#include <vector>

#include "packed_tile.h"
#include "packed_weights.h"
#include "parallel.h"

namespace attnsim {

namespace {

// packed_tile.h's four lanes as SIMD128.
struct Simd128 {
  using reg = v128_t;
  static reg load(const float* p) { return wasm_v128_load(p); }
  static void store(float* p, reg v) { wasm_v128_store(p, v); }
  static reg splat(const float* p) { return wasm_v128_load32_splat(p); }
  static reg mul(reg a, reg b) { return wasm_f32x4_mul(a, b); }
  static reg add(reg a, reg b) { return wasm_f32x4_add(a, b); }
};

// Panels per task when threads split a product: 64 output columns, so GPT-2's narrowest
// product (768 columns) still makes 12 tasks.
constexpr int64_t kPanelsPerTask = 8;

class Simd128Weight final : public PackedWeight {
 public:
  Simd128Weight(const float* w, int64_t out, int64_t in)
      : out_(out), in_(in), panels_(static_cast<size_t>(packed::packed_floats(out, in))) {
    packed::pack_panels(w, out, in, panels_.data());
  }
  int64_t out() const override { return out_; }
  int64_t in() const override { return in_; }
  int64_t bytes() const override { return packed_weight_bytes(out_, in_); }
  void linear(const float* x, int64_t m, const float* bias, float* y) const override {
    parallel_for(packed::panel_count(out_), kPanelsPerTask, [&](int64_t first, int64_t last) {
      packed::linear_panels<Simd128>(panels_.data(), out_, in_, x, m, bias, y, first, last);
    });
  }

 private:
  int64_t out_, in_;
  std::vector<float> panels_;  // (ceil(out/8), in, 8)
};

}  // namespace

bool packing_available() { return true; }

int64_t packed_weight_bytes(int64_t out, int64_t in) {
  return packed::packed_floats(out, in) * static_cast<int64_t>(sizeof(float));
}

std::shared_ptr<const PackedWeight> pack_weight(const float* w, int64_t out, int64_t in) {
  return std::make_shared<const Simd128Weight>(w, out, in);
}

}  // namespace attnsim
