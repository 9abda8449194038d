// model.* fields read off the whole pass (model/whole_pass.h) of a checkpoint, so the lessons
// on where attention sits and on sampling state figures the checker recomputes. The sequence
// is the app's opening one (BOS + r + r, r of `repeat` tokens, default 16, seed 7:
// ModelView::load's repeated_random) without its last token, so the last position, where
// everything is read, has an answer a copying model can find: r's last token.
//
//   stream_embed stream_final   mean over positions of ‖x‖ after embed / after the last block
//   attn_write                  mean over positions of ‖out‖ of block `layer` (default the last):
//                               what its W_O writes into the stream
//   mlp_steps                   the MLP steps a block runs (norm_mlp … resid_mlp not skipped)
//   norm_steps                  the norm steps the whole pass runs (norm_attn, norm_mlp of every
//                               block and norm_final, not skipped); 0 for a model without norms
//   dla_logit                   the top token's logit; its parts (model/lens.h):
//   dla_heads dla_direct        the heads' parts summed, and the rest (embeddings, biases)
//   dla_top dla_top_layer dla_top_head   the largest head part and its head
//   dla_part                    head (`layer`, `head`)'s part
//   dla_top_share               dla_top / dla_heads: the largest head's share of what the heads write
//   dla_half_heads              the fewest heads, largest parts first, that write half of dla_heads
//   lens_embed_prob lens_final_prob      the answer's probability read after embed / the last block
//   lens_agree_from             the first stage whose top token is the answer (0 embed, 1 + l block l)
//   sample_top_prob             under probs at `temperature` (1 when greedy / absent): the top token's
//   sample_kept sample_kept_mass         tokens top_k and top_p keep (`top_k`, `top_p`), their mass
//   sample_next                 next_token under the table's temperature, top_k, top_p, seed
//   loop_share                  the share of tokens decoded after the sequence, up to the model's
//                               positions, that repeat the context: the token before it came
//                               earlier and was followed there (the latest time) by this one;
//                               each drawn by the table's sampling settings (greedy without a
//                               temperature)
//   loop_tokens                 how many tokens loop_share decodes (what each of its shares rests on)
//   loop_seen                   the share of that decode's positions whose last token occurred
//                               before: where the context offers a loop to go on with
//   loop_prob                   at the positions of that decode whose last token occurred before,
//                               the probability under probs (at `temperature`, 1 when greedy) of
//                               the token that continues the loop; the median over them: how sure
//                               the model itself is of the loop
//   third_copy_prob             on the whole BOS + r + r (nothing cut), the probability under probs
//                               of r's first token: a third copy, which training never shows
//   prompts_mean prompts_median prompts_min prompts_max
//                               the field `of` (any above) on each of the first `prompts`
//                               sequences of the same kind (rows 0.. of the repeated batch with
//                               seed 7; row 0 is the sequence above), then their mean, median,
//                               least, largest: the spread of a figure over sequences
//   temperature top_k top_p seed prompts the table's own settings (for {value:model.temperature@ID})
#pragma once

#include <string>
#include <vector>

#include "lessons/lesson.h"
#include "lessons/quantity.h"
#include "model/pass/forward.h"
#include "model/pass/sampling.h"

namespace attnsim::lessons {

// The most sequences a prompts_* field reads (each is a forward pass, loop_share one per token).
inline constexpr int64_t kMaxPrompts = 256;

// The fields above, in order (a function: kModelFields is built from it during static
// initialisation, in another file).
const std::vector<std::string>& whole_fields();
bool is_whole_field(const std::string& field);
// The fields the table's temperature, top_k, top_p and seed change (sample_*, loop_*,
// third_copy_prob).
bool reads_sampling(const std::string& field);
// The sequence the fields read (above), and the sampling options a table names (greedy when it
// names none): a lesson slide shows the same.
std::vector<int32_t> whole_sequence(const model::Model& m, const ModelSettings& settings);
// A model step's `sequence = "whole-pass"`: whole_sequence of the step's first model table
// that reads one checkpoint (its repeat and seed), else of the defaults. The panel, the
// checker and the slides show the same tokens.
std::vector<int32_t> step_whole_sequence(const model::Model& m, const LessonStep& step);
model::SamplingOptions sampling_options(const ModelSettings& settings);
// Throws Error for a layer or head outside the model, dla_part without both, a bad sampling setting.
Value whole_field(const model::Model& m, const ModelSettings& settings, const std::string& field);

}  // namespace attnsim::lessons
