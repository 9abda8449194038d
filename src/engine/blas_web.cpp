// The kernel report of the WebAssembly build (see blas_kernels.h). There is one kernel set:
// Eigen's, compiled to SIMD128 (gemm_eigen.cpp); a browser offers no cpuid and no choice.
#include "blas_kernels.h"

#include <Eigen/Core>

namespace attnsim {

// SIMD128 is four float lanes, the width of the SSE tier; the tier only feeds the x86
// kernel choice, which has nothing to choose here.
IsaTier cpu_tier() { return IsaTier::Sse; }

std::string current_core() { return "WebAssembly SIMD128"; }

bool switch_kernels(const std::string&) { return false; }

BlasKernels apply_kernel_choice(const char*) {
  BlasKernels k;
  k.library = "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
              std::to_string(EIGEN_MINOR_VERSION);
  k.core = k.library_pick = current_core();
  k.picked_by = "the build: -msimd128";
  return k;
}

const BlasKernels& blas_kernels() {
  static const BlasKernels chosen = apply_kernel_choice(nullptr);
  return chosen;
}

// Single-threaded already: a page without cross-origin isolation has no threads.
BlasOnCallingThread::BlasOnCallingThread() = default;
BlasOnCallingThread::~BlasOnCallingThread() = default;

}  // namespace attnsim
