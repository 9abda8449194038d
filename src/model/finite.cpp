#include "finite.h"

namespace attnsim::model {

std::string first_nonfinite(const Activations& acts, const Params* grads) {
  auto bad = [](const Tensor& t) {
    if (!t.defined()) return false;
    const NonFinite c = count_nonfinite(t);
    return c.nan + c.posinf + c.neginf > 0;
  };
  if (bad(acts.x0)) return "x0 (embed + pos_embed)";
  for (size_t l = 0; l < acts.layers.size(); ++l) {
    const LayerActs& la = acts.layers[l];
    const std::string p = "layers." + std::to_string(l) + ".";
    if (bad(la.ln_out)) return p + "ln";
    // the engine counted every step's values as it made them (Trace::add)
    if (const std::string s = la.attn.first_nonfinite_step(); !s.empty()) return p + "attn." + s;
    if (bad(la.x_mid)) return p + "residual";
    if (bad(la.fc1_out)) return p + "mlp.fc1";
    if (bad(la.x_out)) return p + "mlp";
  }
  if (bad(acts.logits)) return "logits";
  if (grads)
    for (size_t i = 0; i < grads->names.size(); ++i)
      if (bad(grads->tensors[i])) return "grad of " + grads->names[i];
  return "";
}

}  // namespace attnsim::model
