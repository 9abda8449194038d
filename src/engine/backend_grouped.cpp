// The grouped ops' default: a backend that cannot read a stride-0 view makes the repeat
// copy and runs its ordinary q·kᵀ / alpha·v. The CPU backend overrides both (no copy).
#include "backend.h"
#include "error.h"

namespace attnsim {

Tensor repeat_groups(const Tensor& grouped) {
  if (grouped.dim() != 5) throw Error("repeat_groups needs (B,g,r,T,dk), got " + format_dims(grouped.shape()));
  const Dims& s = grouped.shape();
  return grouped.reshape({s[0], s[1] * s[2], s[3], s[4]});  // copies: stride 0 cannot merge
}

Tensor Backend::qk_grouped(const Tensor& q, const Tensor& k_grouped) { return qk(q, repeat_groups(k_grouped)); }

Tensor Backend::av_grouped(const Tensor& alpha, const Tensor& v_grouped) {
  return av(alpha, repeat_groups(v_grouped));
}

}  // namespace attnsim
