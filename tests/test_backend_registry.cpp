// The backend registry: "cpu" always; the CUDA module (libattnsim_cuda.so, with cudart and
// cuBLAS) opened only when CUDA is asked for, so a run that never asks never maps the CUDA
// runtime; an unknown name or an unavailable CUDA is one clear Error.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "engine/backend.h"
#include "engine/error.h"
#include "engine/mha.h"

using namespace attnsim;

namespace {
// The names of the files this process has mapped, as /proc/self/maps lists them.
std::string mapped_files() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream all;
  all << maps.rdbuf();
  return all.str();
}
}  // namespace

TEST_CASE("the CUDA runtime is mapped only after CUDA is asked for") {
  MhaConfig c;
  c.batch = 1;
  c.tq = c.tk = 4;
  c.d_model = 8;
  c.heads = 2;
  const ForwardResult r = forward(c, init_weights(c.d_model, c.bias, c.seed), random_inputs(c),
                                  backend_by_name("cpu"));
  REQUIRE(r.trace.at("out").out.numel() == 32);
  CHECK(mapped_files().find("libcudart") == std::string::npos);
  CHECK(mapped_files().find("libcublas") == std::string::npos);
  CHECK(mapped_files().find("libattnsim_cuda") == std::string::npos);

  std::string why;
  const bool cuda = cuda_available(&why);
#ifdef ATTNSIM_HAVE_CUDA
  // the module was opened and its engine symbols resolved against this program: the answer
  // is the device's, not a loader error
  CHECK(mapped_files().find("libattnsim_cuda.so") != std::string::npos);
  CHECK(why.find("could not be loaded") == std::string::npos);
  if (cuda) CHECK(backend_by_name("cuda").name() == "cuda");
#else
  CHECK_FALSE(cuda);
  CHECK(why.find("this build has no CUDA backend") != std::string::npos);
#endif
  if (!cuda) {
    CHECK_FALSE(why.empty());
    CHECK_THROWS_WITH(backend_by_name("cuda"), Catch::Contains("backend 'cuda' is not available: " + why));
  }
  CHECK_THROWS_WITH(backend_by_name("tpu"), "unknown backend 'tpu' (choose cpu or cuda)");
}
