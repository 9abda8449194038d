// The kernel choice (see blas_kernels.h): cpuid tier, the library's pick, the switch.
#include "blas_kernels.h"

#include <cblas.h>
#include <strings.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

// OpenBLAS's own entry points. Weak: a BLAS without them (a non-DYNAMIC_ARCH OpenBLAS, or
// another library) still links, and the choice then only warns.
extern "C" {
char* openblas_get_corename(void) __attribute__((weak));
char* openblas_get_config(void) __attribute__((weak));
void gotoblas_dynamic_init(void) __attribute__((weak));  // reads OPENBLAS_CORETYPE, sets the kernel table
void gotoblas_dynamic_quit(void) __attribute__((weak));  // forgets the table so init picks again
int openblas_get_num_threads(void) __attribute__((weak));
void openblas_set_num_threads(int) __attribute__((weak));
}

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

IsaTier cpu_tier() {
  // __builtin_cpu_supports also checks that the OS saves the wide registers (xgetbv).
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return IsaTier::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return IsaTier::Avx2;
  if (__builtin_cpu_supports("avx")) return IsaTier::Avx;
  return IsaTier::Sse;
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

// Measured on the build machines with sgemm 4096x512x512 (README, "BLAS kernels"): on an
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

std::string current_core() {
  if (openblas_get_corename == nullptr) return "unknown";
  const char* name = openblas_get_corename();
  return name ? name : "unknown";
}

bool switch_kernels(const std::string& core) {
  if (gotoblas_dynamic_init == nullptr || gotoblas_dynamic_quit == nullptr) return false;
  // OpenBLAS parses the name itself; the variable is put back as it was right after, so
  // child processes and later reads see what the user set.
  const char* before = std::getenv("OPENBLAS_CORETYPE");
  const std::string saved = before ? before : "";
  setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  if (before) setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
  else unsetenv("OPENBLAS_CORETYPE");
  return strcasecmp(current_core().c_str(), core.c_str()) == 0;
}

static std::string library_name() {
  if (openblas_get_config == nullptr) return "BLAS (not OpenBLAS)";
  const std::string config = openblas_get_config();  // "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY ..."
  const size_t second_space = config.find(' ', config.find(' ') + 1);
  return config.substr(0, second_space);
}

BlasKernels apply_kernel_choice(const char* user_coretype) {
  BlasKernels k;
  k.library = library_name();
  k.library_pick = current_core();
  const IsaTier cpu = cpu_tier();
  const KernelChoice choice = choose_kernels(k.library_pick, cpu, user_coretype);
  k.picked_by = user_coretype ? "OPENBLAS_CORETYPE" : "OpenBLAS";
  k.warning = choice.warning;
  if (choice.change) {
    if (switch_kernels(choice.core)) {
      k.picked_by = std::string("attnsim (cpuid: ") + tier_name(cpu) + ", OpenBLAS picked " + k.library_pick + ")";
    } else {
      k.warning = k.library + " runs " + k.library_pick + " (" + tier_name(core_tier(k.library_pick)) +
                  ") kernels on a CPU with " + tier_name(cpu) +
                  " and cannot switch in process: set OPENBLAS_CORETYPE=" + choice.core;
    }
  }
  k.core = current_core();
  return k;
}

const BlasKernels& blas_kernels() {
  static const BlasKernels chosen = apply_kernel_choice(std::getenv("OPENBLAS_CORETYPE"));
  return chosen;
}

std::string BlasKernels::summary() const { return library + ", " + core + " kernels (" + picked_by + ")"; }

// [SECTION] threads

BlasOnCallingThread::BlasOnCallingThread() {
  if (openblas_get_num_threads == nullptr || openblas_set_num_threads == nullptr) return;
  before_ = openblas_get_num_threads();
  if (before_ > 1) openblas_set_num_threads(1);
}

BlasOnCallingThread::~BlasOnCallingThread() {
  if (before_ > 1) openblas_set_num_threads(before_);
}

// [SECTION] measurement

double measure_sgemm_gflops(int M, int N, int K, int repeats) {
  std::vector<float> a(static_cast<size_t>(M) * K, 0.5f), b(static_cast<size_t>(N) * K, 0.25f),
      c(static_cast<size_t>(M) * N);
  std::vector<double> seconds;
  for (int r = 0; r <= repeats; ++r) {  // r = 0 is the warm-up
    const auto t0 = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a.data(), K, b.data(), K, 0.0f, c.data(), N);
    if (r > 0) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return 2.0 * M * N * K / seconds[seconds.size() / 2] / 1e9;
}

}  // namespace attnsim
