// The kernel choice (see blas_kernels.h): tiers, the decision as a pure function, the sgemm rate.
#include "blas_kernels.h"

#include <strings.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "gemm.h"

namespace attnsim {

// [SECTION] tiers

const char* tier_name(IsaTier t) {
  switch (t) {
    case IsaTier::Sse: return "SSE3";
    case IsaTier::Avx: return "AVX";
    case IsaTier::Avx2: return "AVX2+FMA";
    case IsaTier::Avx512: return "AVX-512";
  }
  return "?";
}

IsaTier core_tier(const std::string& core) {
  struct Entry {
    const char* name;
    IsaTier tier;
  };
  // OpenBLAS 0.3.21's x86-64 core names (openblas_get_corename()) above SSE.
  static const Entry table[] = {
      {"Sandybridge", IsaTier::Avx},   {"Bulldozer", IsaTier::Avx},     {"Piledriver", IsaTier::Avx},
      {"Steamroller", IsaTier::Avx},   {"Haswell", IsaTier::Avx2},      {"Zen", IsaTier::Avx2},
      {"Excavator", IsaTier::Avx2},    {"SkylakeX", IsaTier::Avx512},   {"Cooperlake", IsaTier::Avx512},
      {"SapphireRapids", IsaTier::Avx512}};
  for (const Entry& e : table)
    if (strcasecmp(core.c_str(), e.name) == 0) return e.tier;
  return IsaTier::Sse;
}

// Measured on the build machines with sgemm 4096x512x512 (docs/benchmarks.md, "BLAS kernels"): on an
// AVX-512 CPU SkylakeX beat Cooperlake (same sgemm kernel, other blocking) and Haswell.
const char* best_core_for(IsaTier t) {
  switch (t) {
    case IsaTier::Avx512: return "SkylakeX";
    case IsaTier::Avx2: return "Haswell";
    case IsaTier::Avx: return "Sandybridge";
    case IsaTier::Sse: return "Prescott";
  }
  return "Prescott";
}

// [SECTION] the choice

KernelChoice choose_kernels(const std::string& library_core, IsaTier cpu, const char* user_coretype) {
  KernelChoice k;
  k.core = library_core;
  const IsaTier have = core_tier(library_core);
  if (have >= cpu) return k;  // the library's pick already uses what the CPU has
  const std::string slower = library_core + " (" + tier_name(have) + ") kernels on a CPU with " + tier_name(cpu);
  if (user_coretype != nullptr) {
    k.warning = std::string("OPENBLAS_CORETYPE=") + user_coretype + " runs " + slower +
                ": matrix products run slower than this CPU allows (unset it, or set " + best_core_for(cpu) + ")";
    return k;
  }
  k.core = best_core_for(cpu);
  k.change = true;
  return k;
}

std::string BlasKernels::summary() const { return library + ", " + core + " kernels (" + picked_by + ")"; }

// [SECTION] measurement

double measure_sgemm_gflops(int M, int N, int K, int repeats) {
  std::vector<float> a(static_cast<size_t>(M) * K, 0.5f), b(static_cast<size_t>(N) * K, 0.25f),
      c(static_cast<size_t>(M) * N);
  using Clock = std::chrono::steady_clock;
  // Each sample times as many products as fill kMinSample: a browser's clock ticks in 0.1 to
  // 1 ms steps, so one fast product could read as 0 s (and the rate as inf).
  constexpr double kMinSample = 0.02;
  std::vector<double> rates;
  sgemm(Op::N, Op::T, M, N, K, 1.0f, a.data(), K, b.data(), K, 0.0f, c.data(), N);  // warm-up
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    double seconds = 0;
    int64_t products = 0;
    do {
      sgemm(Op::N, Op::T, M, N, K, 1.0f, a.data(), K, b.data(), K, 0.0f, c.data(), N);
      ++products;
      seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (seconds < kMinSample);
    rates.push_back(2.0 * M * N * K * static_cast<double>(products) / seconds / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace attnsim
