// Flash attention core on the device: the launchers and the dispatcher; the kernels and the
// algorithm are in flash_kernels.cuh.
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "flash_kernels.cuh"

namespace attnsim::cudak {

namespace {

int max_smem_optin() {
  int dev = 0, bytes = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  check_last("cudaDeviceGetAttribute");
  return bytes;
}

template <int DMAX>
void launch_v1(const FlashArgs& a) {
  const size_t smem = sizeof(float) * (2 * static_cast<size_t>(a.block_k) * a.dk +
                                       static_cast<size_t>(a.block_q) * a.block_k);
  if (smem > static_cast<size_t>(max_smem_optin()))
    throw std::runtime_error("flash v1: blocks " + std::to_string(a.block_q) + "x" +
                             std::to_string(a.block_k) + " at head dim " + std::to_string(a.dk) +
                             " need " + std::to_string(smem) +
                             " bytes of shared memory, more than this GPU offers");
  cudaFuncSetAttribute(flash_v1_kernel<DMAX>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       static_cast<int>(smem));
  check_last("flash v1 (shared memory size)");
  const dim3 grid(static_cast<unsigned>((a.Tq + a.block_q - 1) / a.block_q),
                  static_cast<unsigned>(a.B * a.H));
  flash_v1_kernel<DMAX><<<grid, a.block_q, smem>>>(a);
  check_last("flash v1");
}

}  // namespace

int flash_forward(const FlashArgs& a, int version) {
  if (version == 0) version = flash_v2_fits(a) ? 2 : 1;
  if (a.B * a.H > 65535)
    throw std::runtime_error("flash: batch x heads = " + std::to_string(a.B * a.H) +
                             " exceeds the grid's 65535");
  if (a.B * a.H * a.Tq == 0) return version;
  if (version == 2) {
    if (!flash_v2_fits(a))
      throw std::runtime_error("flash v2 needs head dim 64, 64x64 blocks and 16-byte aligned rows");
    const bool record = a.tile_max != nullptr || a.tile_sum != nullptr ||
                        a.tile_scores != nullptr || a.tile_probs != nullptr || a.tile_acc != nullptr;
    auto kernel = record ? flash_v2_kernel<true> : flash_v2_kernel<false>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(kV2Smem));
    check_last("flash v2 (shared memory size)");
    const dim3 grid(static_cast<unsigned>((a.Tq + kBr - 1) / kBr),
                    static_cast<unsigned>(a.B * a.H));
    kernel<<<grid, kV2Threads, kV2Smem>>>(a);
    check_last("flash v2");
    return 2;
  }
  if (version != 1) throw std::runtime_error("flash: no kernel version " + std::to_string(version));
  if (a.block_q < 1 || a.block_q > 128 || a.block_k < 1 || a.block_k > 128)
    throw std::runtime_error("flash v1: block sizes must be 1..128 (got " +
                             std::to_string(a.block_q) + "x" + std::to_string(a.block_k) + ")");
  if (a.dk <= 16)
    launch_v1<16>(a);
  else if (a.dk <= 32)
    launch_v1<32>(a);
  else if (a.dk <= 64)
    launch_v1<64>(a);
  else if (a.dk <= 128)
    launch_v1<128>(a);
  else
    throw std::runtime_error("flash on CUDA: head dim " + std::to_string(a.dk) +
                             " is larger than 128");
  return 1;
}

}  // namespace attnsim::cudak
