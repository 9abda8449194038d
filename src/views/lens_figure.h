// The Lens tab as a slide (src/figure): the logit lens and the direct logit attribution of the
// sequence on screen, one description for every export (PNG, SVG, PDF).
//
//   left    one row per stage by its display name (embedding, then each block's output,
//           "block 0", ...: step_names.h): its top token and a bar of
//           the final answer's probability read there (the stage whose top token is the
//           answer in the accent colour)
//   right   the answer's logit split by head: a layers × heads grid in the diverging map
//           (0 white, orange adding, purple taking away, ± the largest part at the ends), each cell's value
//           written in it; under it the direct paths (embeddings, biases, MLPs), the logit
//           and the sum of its parts
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "figure/figure.h"
#include "views/i18n.h"
#include "views/sampling_figure.h"
#include "views/whole_run.h"

namespace attnsim::app {

// The tokens the attribution can be asked about by word: the k most likely after the last
// position (softmax of run.last_logits), most likely first, with their probabilities.
struct TokenChoice {
  int32_t id = 0;
  double prob = 0;
};
std::vector<TokenChoice> top_token_choices(const WholeRun& run, int k);

// `title` and `caption` (empty: the slide's own) are a lesson step's, on its deck page.
figure::Figure lens_slide(const WholeRun& run, int64_t heads, const TokenLabel& label, Lang lang,
                          const std::string& theme, const std::string& title = "", const std::string& caption = "");

}  // namespace attnsim::app
