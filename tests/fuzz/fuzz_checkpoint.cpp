// libFuzzer target: the checkpoint loader. The input becomes DIR/model.json of a scratch
// folder and load_checkpoint(DIR) must return a model or throw an attnsim::Error naming the
// file. Sizes in "config" are validated before anything is allocated.
//
// Grammar-aware expansion: a byte 0x01 followed by three bytes N (little-endian, at most
// 2^20) and a byte C stands for C repeated N times. tools/fuzz.sh caps inputs at 8 KB, and
// the deep-nesting segfault (issue 24) needed a 400 KB model.json of '[': with the expansion a
// 6-byte seed (corpus/checkpoint/deep-nesting.json) reaches it, and mutations of the count
// and the byte explore around it (nested objects, strings, one level either side of the bound).
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/error.h"
#include "model/formats/checkpoint.h"

namespace {

const std::string& scratch() {
  static const std::string dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("attnsim-fuzz-ckpt-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

std::string expand(const uint8_t* data, size_t size) {
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0x01 && i + 4 < size) {
      const size_t n = data[i + 1] | (data[i + 2] << 8) | (static_cast<size_t>(data[i + 3]) << 16);
      if (n <= (1u << 20) && out.size() + n <= (2u << 20)) {  // the loader's own cap is 1 MiB: go past it
        out.append(n, static_cast<char>(data[i + 4]));
        i += 4;
        continue;
      }
    }
    out += static_cast<char>(data[i]);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    const std::string text = expand(data, size);
    std::ofstream out(scratch() + "/model.json", std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  try {
    (void)attnsim::model::load_checkpoint(scratch());
  } catch (const attnsim::Error&) {
  }
  return 0;
}
