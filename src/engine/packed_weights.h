// A model's weight reordered ONCE, when the model opens, into the layout the build's product
// kernel reads fastest, so no product with it packs the weight again (OpenBLAS's sgemm packs
// B on every call: a third of GPT-2's forward at 64 tokens).
//
// One implementation per build, chosen by CMake (src/engine/CMakeLists.txt):
//   packed_weights_dnnl.cpp       the desktop with oneDNN (libdnnl-dev): matmul primitive,
//                                 weights reordered to its blocked format
//   packed_weights_simd128.cpp    the page: a SIMD128 kernel on column panels
//   packed_weights_none.cpp       neither: packing_available() is false, linear stays on sgemm
// Only the engine's CPU backend calls linear() (backend.h says how a packed weight travels
// with its Tensor); nothing outside the engine knows which library packs.
#pragma once

#include <cstdint>
#include <memory>

namespace attnsim {

// A weight (out, in) as torch.nn.Linear holds it, reordered once for the build's product kernel.
class PackedWeight {
 public:
  virtual ~PackedWeight() = default;
  virtual int64_t out() const = 0;
  virtual int64_t in() const = 0;
  virtual int64_t bytes() const = 0;  // what the packed copy holds
  // y (m,out) = x (m,in), rows contiguous, · Wᵀ + bias (bias may be null). y is overwritten.
  virtual void linear(const float* x, int64_t m, const float* bias, float* y) const = 0;
};

bool packing_available();                                // false: linear stays on sgemm
int64_t packed_weight_bytes(int64_t out, int64_t in);    // predicted, for the memory check
std::shared_ptr<const PackedWeight> pack_weight(const float* w, int64_t out, int64_t in);

}  // namespace attnsim
