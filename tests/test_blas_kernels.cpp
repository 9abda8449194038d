// The BLAS kernel choice: the decision table, the fallback a CPU newer than the library gets
// (Prescott), the switch back to fast kernels, the one-line warning, and what the CLI says.
#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "engine/blas_kernels.h"
#include "helpers.h"

using namespace attnsim;
using attnsim::test::run_cli;

namespace {

// C (m,n) = A (m,k) · B (n,k)ᵀ through cblas, compared with a plain loop.
double sgemm_error() {
  const int m = 67, n = 45, k = 129;
  std::vector<float> a(m * k), b(n * k), c(m * n);
  for (int i = 0; i < m * k; ++i) a[i] = static_cast<float>(i % 13) * 0.25f - 1.5f;
  for (int i = 0; i < n * k; ++i) b[i] = static_cast<float>(i % 7) * 0.5f - 1.0f;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, c.data(), n);
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int p = 0; p < k; ++p) want += static_cast<double>(a[i * k + p]) * b[j * k + p];
      worst = std::max(worst, std::abs(want - c[i * n + j]));
    }
  return worst;
}

}  // namespace

TEST_CASE("kernel sets map to the instruction sets they use", "[blas]") {
  CHECK(core_tier("Prescott") == IsaTier::Sse);
  CHECK(core_tier("Nehalem") == IsaTier::Sse);
  CHECK(core_tier("Sandybridge") == IsaTier::Avx);
  CHECK(core_tier("Haswell") == IsaTier::Avx2);
  CHECK(core_tier("Zen") == IsaTier::Avx2);
  CHECK(core_tier("SkylakeX") == IsaTier::Avx512);
  CHECK(core_tier("cooperlake") == IsaTier::Avx512);  // OPENBLAS_CORETYPE is case-insensitive
  CHECK(core_tier("NoSuchCore") == IsaTier::Sse);
  CHECK(std::string(best_core_for(IsaTier::Avx512)) == "SkylakeX");
  CHECK(std::string(best_core_for(IsaTier::Avx2)) == "Haswell");
}

TEST_CASE("the choice: switch up from a fallback, keep a fitting pick, warn about a weak override", "[blas]") {
  // A CPU newer than the library: it fell back to Prescott by itself.
  KernelChoice k = choose_kernels("Prescott", IsaTier::Avx512, nullptr);
  CHECK(k.core == "SkylakeX");
  CHECK(k.change);
  CHECK(k.warning.empty());
  k = choose_kernels("Haswell", IsaTier::Avx512, nullptr);  // an older fast set is still a fallback
  CHECK(k.core == "SkylakeX");
  // The library already uses what the CPU has: keep its pick.
  k = choose_kernels("Cooperlake", IsaTier::Avx512, nullptr);
  CHECK(k.core == "Cooperlake");
  CHECK_FALSE(k.change);
  k = choose_kernels("Zen", IsaTier::Avx2, nullptr);
  CHECK(k.core == "Zen");
  CHECK_FALSE(k.change);
  k = choose_kernels("Prescott", IsaTier::Sse, nullptr);  // an old CPU: SSE3 is its best
  CHECK_FALSE(k.change);
  CHECK(k.warning.empty());
  // The user named the weak set: keep it, and say so in one line.
  k = choose_kernels("Prescott", IsaTier::Avx512, "Prescott");
  CHECK(k.core == "Prescott");
  CHECK_FALSE(k.change);
  CHECK(k.warning.find("OPENBLAS_CORETYPE=Prescott") != std::string::npos);
  CHECK(k.warning.find("SkylakeX") != std::string::npos);
  CHECK(k.warning.find('\n') == std::string::npos);
  k = choose_kernels("SkylakeX", IsaTier::Avx512, "SkylakeX");
  CHECK(k.warning.empty());
}

TEST_CASE("a library that fell back to Prescott is switched to fast kernels in process", "[blas]") {
  const BlasKernels& chosen = blas_kernels();  // what this process runs with
  if (current_core() == "unknown") {
    WARN("this BLAS is not a DYNAMIC_ARCH OpenBLAS: nothing to switch");
    return;
  }
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr)
    CHECK(chosen.picked_by == "OPENBLAS_CORETYPE");  // the user's choice is kept
  else
    CHECK(core_tier(chosen.core) >= cpu_tier());
  // Stand in for a CPU the library does not know: its own fallback, the SSE3 kernels.
  REQUIRE(switch_kernels("Prescott"));
  CHECK(current_core() == "Prescott");
  CHECK(sgemm_error() < 1e-3);
  const BlasKernels k = apply_kernel_choice(nullptr);
  CHECK(k.library_pick == "Prescott");
  CHECK(k.warning.empty());
  CHECK(core_tier(k.core) == std::max(cpu_tier(), IsaTier::Sse));
  if (cpu_tier() > IsaTier::Sse) {
    CHECK(k.core == best_core_for(cpu_tier()));
    CHECK(k.picked_by.find("attnsim") != std::string::npos);
  }
  CHECK(current_core() == k.core);
  CHECK(sgemm_error() < 1e-3);  // the switched kernels compute the same products
  REQUIRE(switch_kernels(chosen.core));
}

TEST_CASE("attnsim-cli --version names the BLAS, its kernels and their measured rate", "[blas][cli]") {
  const auto r = run_cli("--version", "env -u OPENBLAS_CORETYPE");
  REQUIRE(r.code == 0);
  CHECK(r.output.find("attnsim-cli 0.") == 0);
  CHECK(r.output.find("BLAS: OpenBLAS") != std::string::npos);
  CHECK(r.output.find(" kernels (") != std::string::npos);
  CHECK(r.output.find("GFLOP/s") != std::string::npos);
  CHECK(r.output.find("warning") == std::string::npos);
  const bool switched = r.output.find(best_core_for(cpu_tier())) != std::string::npos;
  const bool kept = r.output.find("(OpenBLAS)") != std::string::npos;  // the library's own pick already fits
  CHECK((switched || kept));
}

TEST_CASE("OPENBLAS_CORETYPE=Prescott is respected, with a one-line warning on a faster CPU", "[blas][cli]") {
  const auto r = run_cli("--version", "OPENBLAS_CORETYPE=Prescott");
  REQUIRE(r.code == 0);
  CHECK(r.output.find("Prescott kernels (OPENBLAS_CORETYPE)") != std::string::npos);
  const size_t at = r.output.find("\nwarning: ");
  if (cpu_tier() == IsaTier::Sse) {
    CHECK(at == std::string::npos);
    return;
  }
  REQUIRE(at != std::string::npos);
  const std::string line = r.output.substr(at + 1, r.output.find('\n', at + 1) - at - 1);
  CHECK(line.find("OPENBLAS_CORETYPE=Prescott") != std::string::npos);
  CHECK(line.find(best_core_for(cpu_tier())) != std::string::npos);
  CHECK(r.output.find("warning", at + 1 + line.size()) == std::string::npos);  // once
  // bench says it too, on stderr, in one line
  const auto bench = run_cli("bench --repeats 1 --batch 1 --tq 4 --d-model 8 --heads 2", "OPENBLAS_CORETYPE=Prescott");
  REQUIRE(bench.code == 0);
  CHECK(bench.output.find("attnsim-cli: warning: OPENBLAS_CORETYPE=Prescott") != std::string::npos);
  CHECK(bench.output.find("Prescott kernels (OPENBLAS_CORETYPE)") != std::string::npos);
}
