// backend_by_name / cuda_available: which backends this build and this machine offer.
// "cpu" always; "cuda" when the build has the CUDA backend (ATTNSIM_HAVE_CUDA, set by the
// [CUDA] block of the top-level CMakeLists.txt) and the CUDA runtime sees a device.
//
// The CUDA backend is a module, libattnsim_cuda.so beside the program, opened on the first
// question about CUDA: the CUDA runtime and cuBLAS map about 220 MB and take 0.4 s at load,
// which a program that never asks (every run without a GPU) should not pay.
#include "backend.h"
#include "error.h"

#ifdef ATTNSIM_HAVE_CUDA
#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#endif

namespace attnsim {

namespace {

#ifdef ATTNSIM_HAVE_CUDA
// The module's backend, or nullptr with why_not: opened once, the answer kept.
Backend* cuda_module(std::string* why_not) {
  static std::once_flag once;
  static Backend* backend = nullptr;
  static std::string why;
  std::call_once(once, [] {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path module = exe.parent_path() / "libattnsim_cuda.so";
    void* handle = ec ? nullptr : dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      why = "its module could not be loaded (" + (ec ? ec.message() : std::string(dlerror())) +
            "); it is built beside the program as libattnsim_cuda.so";
      return;
    }
    using Entry = Backend* (*)(std::string*);
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "attnsim_cuda_backend"));
    if (entry == nullptr) {
      why = module.string() + " has no entry point attnsim_cuda_backend";
      return;
    }
    try {
      backend = entry(&why);
    } catch (const std::exception& e) {
      why = e.what();
    }
  });
  if (backend == nullptr && why_not != nullptr) *why_not = why;
  return backend;
}
#endif

}  // namespace

bool cuda_available(std::string* why_not) {
#ifdef ATTNSIM_HAVE_CUDA
  return cuda_module(why_not) != nullptr;
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
#ifdef ATTNSIM_HAVE_CUDA
    if (Backend* cuda = cuda_module(&why)) return *cuda;
#else
    cuda_available(&why);
#endif
    throw Error("backend 'cuda' is not available: " + why);
  }
  throw Error("unknown backend '" + name + "' (choose cpu or cuda)");
}

}  // namespace attnsim
