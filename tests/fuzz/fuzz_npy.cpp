// libFuzzer target: the .npy reader (header dict, shape, sizes, data). Any bytes must give a
// tensor or an attnsim::Error; a tensor must survive a round trip through encode_npy.
#include <cstdint>
#include <string>

#include "engine/error.h"
#include "engine/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const attnsim::Tensor t = attnsim::parse_npy(bytes, "fuzz.npy");
    const attnsim::Tensor back = attnsim::parse_npy(attnsim::encode_npy(t), "round-trip.npy");
    if (back.shape() != t.shape() || back.dtype() != t.dtype()) __builtin_trap();
  } catch (const attnsim::Error&) {
  }
  return 0;
}
