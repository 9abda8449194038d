// libFuzzer target: the checkpoint loader. The input becomes DIR/model.json of a scratch
// folder and load_checkpoint(DIR) must return a model or throw (an attnsim::Error naming the
// file; a nlohmann type error from a field of the wrong JSON type is tolerated here and shown
// as one line by the CLI). Sizes in "config" are validated before anything is allocated.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/error.h"
#include "model/checkpoint.h"

namespace {

const std::string& scratch() {
  static const std::string dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("attnsim-fuzz-ckpt-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream out(scratch() + "/model.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    (void)attnsim::model::load_checkpoint(scratch());
  } catch (const attnsim::Error&) {
  } catch (const nlohmann::json::exception&) {
  }
  return 0;
}
