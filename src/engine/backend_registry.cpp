// backend_by_name / cuda_available: which backends this build and this machine offer.
// "cpu" always; "cuda" when the build has the CUDA backend (ATTNSIM_HAVE_CUDA, set by the
// [CUDA] block of the top-level CMakeLists.txt) and the CUDA runtime sees a device.
#include "backend.h"
#include "error.h"

#ifdef ATTNSIM_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

namespace attnsim {

bool cuda_available(std::string* why_not) {
#ifdef ATTNSIM_HAVE_CUDA
  return cuda_device_present(why_not);
#else
  if (why_not != nullptr)
    *why_not = "this build has no CUDA backend (configure with -DATTNSIM_CUDA=ON where nvcc is installed)";
  return false;
#endif
}

Backend& backend_by_name(const std::string& name) {
  if (name == "cpu") return cpu_backend();
  if (name == "cuda") {
    std::string why;
    if (!cuda_available(&why)) throw Error("backend 'cuda' is not available: " + why);
#ifdef ATTNSIM_HAVE_CUDA
    return cuda_backend();
#endif
  }
  throw Error("unknown backend '" + name + "' (choose cpu or cuda)");
}

}  // namespace attnsim
