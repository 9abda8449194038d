// Teaching bugs: each one is a real mistake people make in attention code. The forward
// pass can run with one of them switched on so the app and lessons can show its effect
// side by side with the correct run. Names are kebab-case and used everywhere (CLI, app
// scenario names, lessons).
#pragma once

#include <string>
#include <vector>

namespace attnsim {

enum class Bug {
  None,
  MaskInverted,       // mask marks visible positions true: hides exactly what should be seen
  MaskTwoFills,       // causal and padding applied by two masked_fill calls instead of OR
  MaskAdditive,       // bool mask added as a float (0/1): hidden cells get +1, not -inf
  MaskFiniteFill,     // masked_fill(-1e9): fully hidden rows become uniform instead of NaN
  MaskInvertedFiniteFill,  // both at once: the inverted mask's fully hidden rows turn uniform,
                           // so the wrong direction passes silently (no NaN)
  SoftmaxWrongAxis,   // softmax over the query axis (dim=-2): columns sum to 1, rows do not
  NoScale,            // scores not divided by sqrt(d_k): large logits saturate the softmax
  SoftmaxNoMaxFp16,   // exp without subtracting the row max, in half precision: inf/inf = NaN
  ViewWithoutContiguous,  // ctx.transpose(1,2).view(B,T,d) without contiguous(): an error
};

struct BugInfo {
  Bug bug;
  const char* name;     // "mask-inverted"
  const char* summary;  // one line, English
};

const std::vector<BugInfo>& all_bugs();
// Throws Error listing the valid names.
Bug parse_bug(const std::string& name);
const char* bug_name(Bug bug);
bool is_mask_bug(Bug bug);

}  // namespace attnsim
