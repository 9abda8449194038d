// libFuzzer target: the mask-spec parser ("causal,key-padding=5:3,side=left"). A spec either
// parses, prints back to a spec that parses to the same text, and builds a small mask, or
// it is an attnsim::Error.
#include <cstdint>
#include <string>

#include "engine/error.h"
#include "engine/mask.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const attnsim::MaskSpec spec = attnsim::parse_mask_spec(text);
    const std::string printed = attnsim::format_mask_spec(spec);
    if (attnsim::format_mask_spec(attnsim::parse_mask_spec(printed == "none" ? "" : printed)) != printed)
      __builtin_trap();
    (void)attnsim::build_mask(spec, 2, 8, 8);  // (2,1,8,8) or undefined; small on purpose
  } catch (const attnsim::Error&) {
  }
  return 0;
}
