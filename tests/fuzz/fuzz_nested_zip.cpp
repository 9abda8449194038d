// libFuzzer target: zips inside zips (issue 37). The input is a zip; every .zip it unpacks is
// unpacked in turn, as the app does with a dropped archive (app/open_files.cpp), all through one
// UnpackBudget. However the levels nest, the walk must stop within kDepth levels and kBytes
// unpacked over all of them, with files or an attnsim::Error, never a crash or a runaway.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/zip_extract.h"

namespace fs = std::filesystem;

namespace {

constexpr int kDepth = 3;
constexpr int64_t kBytes = 1 << 20;

int64_t bytes_under(const fs::path& dir) {
  int64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) n += static_cast<int64_t>(e.file_size());
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fs::path root = fs::temp_directory_path() / ("attnsim-fuzz-nested-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const fs::path zip = root / "in.zip";
  std::ofstream(zip, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  attnsim::UnpackBudget budget{kDepth, kBytes};
  std::vector<fs::path> pending{zip};
  int opened = 0;
  try {
    while (!pending.empty()) {
      const fs::path next = pending.back();
      pending.pop_back();
      const fs::path dest = root / ("level-" + std::to_string(opened++));
      budget.extract(next.string(), dest.string());
      for (const auto& e : fs::recursive_directory_iterator(dest))
        if (e.is_regular_file() && e.path().extension() == ".zip") pending.push_back(e.path());
    }
  } catch (const attnsim::Error&) {
  }
  // the walk stayed inside its bounds, whatever the archive claimed
  if (opened > kDepth + 1 || budget.depth_left < 0) __builtin_trap();
  if (bytes_under(root) - static_cast<int64_t>(size) > kBytes) __builtin_trap();
  fs::remove_all(root);
  return 0;
}
