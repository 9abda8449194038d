// packed_weights.h for a build with no packing library: nothing is packed, so every linear
// stays on sgemm (gemm.h) and the memory check predicts no packed copies.
#include "packed_weights.h"

#include "error.h"

namespace attnsim {

bool packing_available() { return false; }

int64_t packed_weight_bytes(int64_t, int64_t) { return 0; }

std::shared_ptr<const PackedWeight> pack_weight(const float*, int64_t, int64_t) {
  throw Error("this build packs no weights (built without oneDNN); check packing_available() first");
}

}  // namespace attnsim
