// libFuzzer target: the zip reader (end record, central directory, names, sizes, inflate,
// CRC). Any bytes must unpack inside the scratch folder or give an attnsim::Error that leaves
// no folder behind.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/error.h"
#include "engine/zip_extract.h"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fs::path root = fs::temp_directory_path() / ("attnsim-fuzz-zip-" + std::to_string(::getpid()));
  fs::create_directories(root);
  const fs::path zip = root / "in.zip", dest = root / "out";
  std::ofstream(zip, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    attnsim::extract_zip(zip.string(), dest.string(), 1 << 20);
    for (const auto& e : fs::recursive_directory_iterator(dest)) {  // nothing escaped the folder
      const fs::path rel = e.path().lexically_relative(dest);  // "..name" is a name; ".." is not
      if (rel.empty() || *rel.begin() == "..") __builtin_trap();
    }
  } catch (const attnsim::Error&) {
    if (fs::exists(dest)) __builtin_trap();  // a refused archive leaves nothing
  }
  fs::remove_all(dest);
  return 0;
}
