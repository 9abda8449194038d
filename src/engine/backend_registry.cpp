// Backend lookup by name: "cpu" always; "cuda" only in a CUDA build with a device present.
#include "backend.h"
#include "error.h"

namespace attnsim {

bool cuda_available(std::string* why_not) {
  if (why_not) *why_not = "this build of attnsim has no CUDA backend (configure with -DATTNSIM_CUDA=ON)";
  return false;
}

Backend& backend_by_name(const std::string& name) {
  if (name == "cpu") return cpu_backend();
  if (name == "cuda") {
    std::string why;
    if (!cuda_available(&why)) throw Error("--backend cuda: " + why);
  }
  throw Error("unknown backend '" + name + "' (valid: cpu, cuda)");
}

}  // namespace attnsim
