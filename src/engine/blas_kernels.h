// Which BLAS kernels run the matrix products, and why.
//
// Debian 12's OpenBLAS 0.3.21 is a DYNAMIC_ARCH build: at load time it picks a kernel set
// by CPU model number. A CPU newer than the library (seen: Intel model 207, AVX-512 + AMX)
// is not in its table, so it falls back to "Prescott" (SSE3) kernels: sgemm 8x slower,
// silently. attnsim reads the CPU's instruction sets with cpuid and, when the library's pick
// uses fewer of them than the CPU has, switches OpenBLAS to the set measured fastest for that
// tier (docs/benchmarks.md, "BLAS kernels"). OpenBLAS reads OPENBLAS_CORETYPE in its load-time
// constructor, before main, so the switch re-runs OpenBLAS's own core selection in process
// (gotoblas_dynamic_init) before the first matrix product. An explicit OPENBLAS_CORETYPE is
// the user's choice and is kept; a weak one gets a one-line warning.
#pragma once

#include <string>

namespace attnsim {

// What a kernel set uses, weakest to strongest.
enum class IsaTier { Sse = 0, Avx = 1, Avx2 = 2, Avx512 = 3 };

const char* tier_name(IsaTier t);  // "SSE3", "AVX", "AVX2+FMA", "AVX-512"
// The widest tier this CPU and its OS support (cpuid, and xgetbv for the register state).
IsaTier cpu_tier();
// The tier an OpenBLAS core name's kernels use ("Prescott" -> Sse, "SkylakeX" -> Avx512);
// Sse for a name it does not know.
IsaTier core_tier(const std::string& core);
// The kernel set attnsim picks for a tier (the measured fastest; docs/benchmarks.md, "BLAS kernels").
const char* best_core_for(IsaTier t);

// The decision, as a pure function so the tests can walk every case.
struct KernelChoice {
  std::string core;     // the set to run
  bool change = false;  // core differs from what the library picked
  std::string warning;  // one line; empty when the kernels fit the CPU
};
// library_core: what the library runs now; user_coretype: OPENBLAS_CORETYPE (nullptr when
// unset; set means the library already honoured it, so it is kept).
KernelChoice choose_kernels(const std::string& library_core, IsaTier cpu, const char* user_coretype);

struct BlasKernels {
  std::string library;       // "OpenBLAS 0.3.21"
  std::string core;          // the set in use now (openblas_get_corename())
  std::string library_pick;  // what the library chose on its own (or was told by OPENBLAS_CORETYPE)
  std::string picked_by;     // "OpenBLAS", "attnsim (cpuid: AVX-512)" or "OPENBLAS_CORETYPE"
  std::string warning;       // one line, empty when the kernels fit the CPU
  std::string summary() const;  // "OpenBLAS 0.3.21, SkylakeX kernels (attnsim (cpuid: AVX-512))"
};

// Makes the choice once, the first time it is called, and returns it. Call it before any
// other thread does BLAS work (main() does; cpu_backend() does as a safety net).
const BlasKernels& blas_kernels();
// The choice made now, from the library's current core; blas_kernels() calls it once.
BlasKernels apply_kernel_choice(const char* user_coretype);
// Runs OpenBLAS's core selection again with `core` (true when the library could switch and
// now names it). Only while no other thread is in BLAS. Tests use it to stand in for a
// library that fell back to Prescott.
bool switch_kernels(const std::string& core);
// The library's own name for the set in use.
std::string current_core();

// While alive, OpenBLAS runs each call on the calling thread alone: for many small products
// (one per batch element and head, 128x128x64 at the article's shape) the engine's own
// threads take whole products, which measured about 2x faster than OpenBLAS splitting each
// small product over the cores. The thread count is process-wide in OpenBLAS 0.3.21, so this
// is for the engine's own parallel regions only.
class BlasOnCallingThread {
 public:
  BlasOnCallingThread();
  ~BlasOnCallingThread();
  BlasOnCallingThread(const BlasOnCallingThread&) = delete;
  BlasOnCallingThread& operator=(const BlasOnCallingThread&) = delete;

 private:
  int before_ = 0;
};

// sgemm rate at M x N x K (row-major, B transposed, as the projections use it): the median
// of `repeats` samples after one warm-up, each timing at least 20 ms of products, in GFLOP/s.
double measure_sgemm_gflops(int M = 2048, int N = 512, int K = 512, int repeats = 5);

}  // namespace attnsim
