#include "bugs.h"

#include "error.h"

namespace attnsim {

const std::vector<BugInfo>& all_bugs() {
  static const std::vector<BugInfo> bugs = {
      {Bug::None, "none", "the correct forward pass"},
      {Bug::MaskInverted, "mask-inverted", "mask marks visible positions: the wrong ones are hidden"},
      {Bug::MaskTwoFills, "mask-two-fills", "causal and padding applied as two masked_fill calls"},
      {Bug::MaskAdditive, "mask-additive", "bool mask added as 0/1 floats: hidden cells get +1"},
      {Bug::MaskFiniteFill, "mask-finite-fill", "masked_fill(-1e9): fully hidden rows turn uniform"},
      {Bug::MaskInvertedFiniteFill, "mask-inverted-finite-fill",
       "inverted mask filled with -1e9: no NaN, the wrong direction stays silent"},
      {Bug::SoftmaxWrongAxis, "softmax-wrong-axis", "softmax over the query axis (dim=-2)"},
      {Bug::NoScale, "no-scale", "scores not divided by sqrt(d_k): the softmax saturates"},
      {Bug::SoftmaxNoMaxFp16, "softmax-no-max-fp16", "half-precision exp without the row max"},
      {Bug::ViewWithoutContiguous, "view-without-contiguous", "view on the transposed context"},
  };
  return bugs;
}

Bug parse_bug(const std::string& name) {
  std::string valid;
  for (const BugInfo& info : all_bugs()) {
    if (name == info.name) return info.bug;
    valid += valid.empty() ? info.name : std::string(", ") + info.name;
  }
  throw Error("unknown bug '" + name + "' (valid: " + valid + ")");
}

const char* bug_name(Bug bug) {
  for (const BugInfo& info : all_bugs())
    if (info.bug == bug) return info.name;
  return "none";
}

bool is_mask_bug(Bug bug) {
  return bug == Bug::MaskInverted || bug == Bug::MaskTwoFills || bug == Bug::MaskAdditive ||
         bug == Bug::MaskFiniteFill || bug == Bug::MaskInvertedFiniteFill;
}

}  // namespace attnsim
