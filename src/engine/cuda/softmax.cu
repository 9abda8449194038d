// scale + mask + softmax on the device: the dispatcher; the kernels are in
// softmax_kernels.cuh.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "softmax_kernels.cuh"

namespace attnsim::cudak {

int softmax_forward(const SoftmaxArgs& a, int version) {
  const bool v2_fits = a.axis == -1 && !a.fp16_no_max;
  if (version == 0) version = v2_fits ? 2 : 1;
  if (version == 2 && !v2_fits)
    throw std::runtime_error("softmax v2 handles axis -1 without the fp16 bug only; use v1");
  if (version != 1 && version != 2)
    throw std::runtime_error("softmax: no kernel version " + std::to_string(version));
  const int64_t n = a.B * a.H * a.Tq * a.Tk;
  if (n == 0) return version;
  if (version == 1) {
    const int64_t rows = a.B * a.H * (a.axis == -1 ? a.Tq : a.Tk);
    const int threads = 128;
    softmax_v1_kernel<<<static_cast<unsigned>((rows + threads - 1) / threads), threads>>>(a);
  } else {
    const int64_t rows = a.B * a.H * a.Tq;
    softmax_v2_kernel<<<static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock),
                        kWarpsPerBlock * 32>>>(a);
  }
  check_last(version == 1 ? "softmax v1" : "softmax v2");
  return version;
}

}  // namespace attnsim::cudak
