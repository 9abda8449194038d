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
//   dla_logit                   the top token's logit; its parts (model/lens.h):
//   dla_heads dla_direct        the heads' parts summed, and the rest (embeddings, biases)
//   dla_top dla_top_layer dla_top_head   the largest head part and its head
//   dla_part                    head (`layer`, `head`)'s part
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
//   temperature top_k top_p seed         the table's own settings (for {value:model.temperature@ID})
#pragma once

#include <string>
#include <vector>

#include "lessons/lesson.h"
#include "lessons/quantity.h"
#include "model/model.h"
#include "model/sampling.h"

namespace attnsim::lessons {

// The fields above, in order (a function: kModelFields is built from it during static
// initialisation, in another file).
const std::vector<std::string>& whole_fields();
bool is_whole_field(const std::string& field);
// The sequence the fields read (above), and the sampling options a table names (greedy when it
// names none): a lesson slide shows the same.
std::vector<int32_t> whole_sequence(const model::Model& m, const ModelSettings& settings);
model::SamplingOptions sampling_options(const ModelSettings& settings);
// Throws Error for a layer or head outside the model, dla_part without both, a bad sampling setting.
Value whole_field(const model::Model& m, const ModelSettings& settings, const std::string& field);

}  // namespace attnsim::lessons
