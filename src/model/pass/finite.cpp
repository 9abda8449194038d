#include "model/pass/finite.h"

namespace attnsim::model {

std::string first_nonfinite(const Activations& acts, const Params* grads) {
  auto bad = [](const Tensor& t) {
    if (!t.defined()) return false;
    const NonFinite c = count_nonfinite(t);
    return c.nan + c.posinf + c.neginf > 0;
  };
  // named as the whole pass names its steps (whole_pass.h)
  if (bad(acts.x0)) return "embed";
  for (size_t l = 0; l < acts.layers.size(); ++l) {
    const LayerActs& la = acts.layers[l];
    const std::string p = "layer_" + std::to_string(l) + "/";
    if (bad(la.ln_out)) return p + "norm_attn";
    // the engine counted every step's values as it made them (Trace::add)
    if (const std::string s = la.attn.first_nonfinite_step(); !s.empty()) return p + s;
    if (bad(la.x_mid)) return p + "resid_attn";
    if (bad(la.fc1_out)) return p + "mlp_up";
    if (bad(la.x_out)) return p + "resid_mlp";
  }
  if (bad(acts.logits)) return "logits";
  if (grads)
    for (size_t i = 0; i < grads->names.size(); ++i)
      if (bad(grads->tensors[i])) return "grad of " + grads->names[i];
  return "";
}

}  // namespace attnsim::model
