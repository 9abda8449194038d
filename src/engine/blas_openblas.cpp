// The OpenBLAS side of the kernel choice (the desktop build; see blas_kernels.h): the CPU's
// tier from cpuid, the library's pick, the in-process switch, the library's thread count.
#include "blas_kernels.h"

#include <strings.h>

#include <cstdlib>

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

// [SECTION] threads

BlasOnCallingThread::BlasOnCallingThread() {
  if (openblas_get_num_threads == nullptr || openblas_set_num_threads == nullptr) return;
  before_ = openblas_get_num_threads();
  if (before_ > 1) openblas_set_num_threads(1);
}

BlasOnCallingThread::~BlasOnCallingThread() {
  if (before_ > 1) openblas_set_num_threads(before_);
}

}  // namespace attnsim
