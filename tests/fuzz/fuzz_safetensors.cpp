// libFuzzer target: the safetensors header (length, JSON, dtypes, shapes, data_offsets).
// Any bytes must give tensors that lie inside the file without overlapping, or an
// attnsim::Error.
#include <algorithm>
#include <cstdint>

#include "engine/error.h"
#include "model/formats/hf_safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using attnsim::model::hf::SafetensorsSet;
  using attnsim::model::hf::TensorInfo;
  try {
    std::vector<TensorInfo> ts = SafetensorsSet::parse_header(data, size, static_cast<int64_t>(size), "fuzz.safetensors");
    std::sort(ts.begin(), ts.end(), [](const TensorInfo& a, const TensorInfo& b) { return a.begin < b.begin; });
    int64_t reach = 8;
    for (const TensorInfo& t : ts) {
      if (t.begin < 8 || t.end > static_cast<int64_t>(size) || t.end < t.begin) __builtin_trap();
      if (t.end > t.begin && t.begin < reach) __builtin_trap();  // overlap
      if (t.end - t.begin != t.numel() * attnsim::model::hf::dtype_size(t.dtype)) __builtin_trap();
      reach = std::max(reach, t.end);
    }
  } catch (const attnsim::Error&) {
  }
  return 0;
}
