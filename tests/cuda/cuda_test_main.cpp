// Main of attnsim-cuda-tests. Catch2 v2 has no "skip", so a test that needs a GPU calls
// require_gpu(), which ends the process with exit code 77 when no CUDA device is present;
// CTest runs one test case per process and every test carries SKIP_RETURN_CODE 77, so on a
// machine without a GPU they are reported as skipped, never as passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/backend.h"
#include "gpu_skip.h"

namespace attnsim::testing {

void require_gpu() {
  std::string why;
  if (cuda_available(&why)) return;
  std::printf("SKIPPED: %s\n", why.c_str());
  std::fflush(stdout);
  std::exit(kSkipCode);
}

}  // namespace attnsim::testing

int main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
