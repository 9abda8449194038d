// Engine quantities a lesson can name: the one vocabulary for claims, quiz answers and task
// checks. Each is computed by the engine (forward pass, cost model, flash IO model), never
// typed in.
//
//   config.<field>         the resolved settings (no engine run): batch tq tk d_model heads
//                          head_dim seed dropout last_query (= tq - 1, the last row)
//                          input_scale key_length_last key_pads_last query_pads_last (the
//                          last batch element's padding)
//   cost.<name>            closed-form cost model (cost_quantity_names(): params_no_bias,
//                          kv_cache_bytes, score_bytes_layer, ...) + the sizes it used:
//                          cost.head_dim heads kv_heads d_model layers seq batch dtype_bytes;
//                          cost.qk_madds_layer (q·kᵀ multiply-adds, = qk_flops_layer / 2);
//                          sizes from the claim's `cost` table
//   trace.<step>.<field>   one step of the forward pass under the claim's settings; fields:
//                          shape strides (lists), numel dim0..dim4 stride0..stride4 offset
//                          new_bytes copied_bytes nan_count neginf_count is_view is_copy
//                          skipped contiguous storage_id
//   run.<field>            the whole run: held_bytes, nan_steps (steps with NaN),
//                          first_nan_step (text), failed (1 when the pass stopped with an
//                          error: view without contiguous), error (text)
//   alpha.<field>          the attention weights (alpha) against the mask the settings mean:
//                          hidden_max (largest weight on a hidden position, NaN rows left
//                          out), hidden_nonzero (hidden positions with weight != 0),
//                          row_sum_max_dev (max |row sum - 1|, NaN rows left out),
//                          col_sum_max_dev, nan_rows (rows with NaN), hidden_rows (rows with
//                          every key hidden), max_weight_mean (mean of each row's largest
//                          weight), entropy_mean (mean row entropy in nats), diag_share,
//                          prev_share, first_share (mean weight a row gives to its own
//                          position, the one before it, the first token: head-role statistics),
//                          row_count (B·h·Tq distributions), dropped_row_sum_max_dev (max
//                          |row sum - 1| of alpha_dropped: train mode), dropped_zeroed (weights
//                          dropout set to 0), entropy_uniform (mean of ln(visible keys): the
//                          entropy_mean a uniform row would have, its ceiling)
//   diff.<step>            max |a - b| between this run and the `against` run at a step
//                          (NaN in the same places counts as equal; anywhere else: inf)
//   pair.<step>            max |a - b| between two steps of one run (`step_b`), same shape
//   reshape_copy.<step>    bytes that reshape() copies when it merges the step's last two
//                          axes into one (0: reshape returned a view)
//   bmm_copy.<step>        bytes PyTorch's batched matmul copies when it folds the step's
//                          first two axes (B, h) into one batch axis (0: a view): what q @ kᵀ
//                          and alpha @ v cost there and not here (tests/golden/torch_copies.json)
//   ablate.<field>         head `head`'s ctx zeroed, W_O applied again: out_change (max
//                          change of out), outside_slice (max change outside that head's
//                          d_k columns of out), inside_slice
//   flash.<field>          the FlashAttention IO model for the claim's `flash` sizes (and the
//                          sizes themselves: batch heads tq tk head_dim block_q block_k):
//                          standard_reads standard_writes standard_traffic tiled_reads
//                          tiled_writes tiled_traffic traffic_ratio (standard / tiled),
//                          score_bytes (S and P of the standard path, float32),
//                          fast_bytes (one tile's working set, float32)
//   flashrun.<field>       the tiled path run on the claim's settings (block sizes from
//                          `flash.block_q` / `flash.block_k` when given), compared with the
//                          standard path: max_abs_diff, tolerance, within_tolerance (1/0),
//                          nan_mismatches, tiles_skipped, tiles_total
//   decode.<field>         the decode scenario's run (decode, decode-gqa, ... presets) on
//                          its real caches: storage_bytes (every cache storage), formula_bytes
//                          (the cost model for the same slots), bytes_per_token, used_bytes,
//                          append_bytes (K+V one layer, last step), cache_new_bytes (0: the
//                          append and the view allocate nothing), same_storage (1: the last
//                          step's k_cache is a view of the first one's storage), slots, tokens,
//                          filled, grouped_stride (k_grouped's stride on the group axis, -1
//                          without groups), max_diff_full (decode vs the full causal forward),
//                          kv_heads, heads, layers, head_dim, t_max, sink and window (the
//                          cache policy's; 0 when it has none); the settings' `policy`
//                          replaces the preset's. decode-model, decode-model-sinks run the
//                          checkpoint of the claim's `model` table (shipped induction by
//                          default) and, when the policy evicts, add loss_from (its slots:
//                          the first position that lost a key), loss_full loss_policy
//                          loss_window (mean next-token loss in nats from loss_from: every
//                          key, the policy, a plain window of as many slots;
//                          model::eviction_losses) and bos_weight (mean weight on position 0
//                          from loss_from on: the model table's layer, default the last,
//                          its head or the mean of its heads; 0 once BOS is evicted),
//                          copy_targets (targets from loss_from on that can be copied:
//                          model::copyable_targets) copy_full copy_policy copy_window (the
//                          top guess's accuracy on them), other_loss_full other_loss_policy
//                          other_loss_window (mean loss on the other targets)
//   model.<field>          a shipped trained checkpoint (model_quantity.h), chosen by the
//                          claim's `model` table { checkpoint = "induction" (a folder under
//                          assets/models/), step = 750 (checkpoints/step-000750, or the final
//                          model's step), layer, head, ablate = "1.0,1.1", repeat, role }:
//                          step params d_model heads layers head_dim; one head (layer, head)
//                          on model::scoring_batch: previous induction duplicate (per target
//                          row, heads.h) first (first-token share) role (text label); layer
//                          head repeat (the table's own figures); every head: best_previous
//                          best_induction role_count (heads labelled `role`); on
//                          model::ablation_batch with the `ablate` heads zeroed:
//                          repeat_accuracy repeat_loss first_loss (nats), repeat_accuracy_drop
//                          and repeat_loss_rise (against no ablation); length_accuracy (BOS +
//                          segments of length `repeat`, model::evaluate_repeats),
//                          unseen_accuracy (the lengths the recipe held out, pooled);
//                          phase_change_step (the first step of train_log.jsonl whose best
//                          induction score exceeds 0.5); late_loss_full late_loss_window
//                          late_loss_sink (`attnsim-cli experiment streaming`: mean loss at
//                          the last positions with the full cache, a window that evicted BOS,
//                          and BOS kept as a sink), stream_accuracy_full / _window / _sink
//                          (accuracy on the second copies there), stream_sequences;
//                          baselines (on the ablation batch): vocab_targets (V - 1: BOS is
//                          never a target), chance_accuracy (1/(V-1)), uniform_loss
//                          (ln(V-1)), seen_accuracy (a uniform pick among the distinct
//                          tokens seen so far, on the predictable targets), seen_guess_share
//                          (the model's top guesses there that are such a token); kv_heads
//                          in the table: repeat_accuracy repeat_loss first_loss on
//                          model::convert_to_gqa (K/V heads mean-pooled, no uptraining);
//                          runs = "a,b,c" in the table (checkpoints of one recipe, one per
//                          seed): runs_count, runs_learned (repeat_accuracy >= 0.5),
//                          runs_min runs_median runs_max (of repeat_accuracy, or of the
//                          table's `of` field); keep = k in the table: repeat_accuracy
//                          repeat_loss first_loss with each layer pruned to k heads
//                          (model::prune_to); first_contribution (one head), gap_layer
//                          gap_head gap_first gap_contribution gap_size (first − contribution),
//                          mean_entropy uniform_entropy; kv_groups (the checkpoint's own
//                          K/V heads), uptrain_steps (a gqa-convert --out checkpoint's
//                          uptraining; 0 for others); first_loss_rise (the first copies'
//                          loss against no ablation); over every head: gap_up gap_down (heads
//                          whose weight on position 0 exceeds / falls short of its
//                          contribution), gap_mean (the gap's mean weighted by each head's
//                          weight on position 0), head_count (layers × heads);
//                          init_mean_entropy (mean_entropy of the untrained weights:
//                          init_model with the checkpoint's config and seed);
//                          recall_present_chance (a recall run: a uniform guess among the
//                          distinct value tokens already in the sequence); the whole pass of
//                          the app's opening sequence less its last token (whole_quantity.h): stream_embed
//                          stream_final attn_write mlp_steps norm_steps dla_logit dla_heads dla_direct
//                          dla_top dla_top_layer dla_top_head dla_part dla_top_share
//                          dla_half_heads lens_embed_prob lens_final_prob lens_agree_from,
//                          and under the table's temperature top_k top_p seed:
//                          sample_top_prob sample_kept sample_kept_mass sample_next
//                          loop_share loop_tokens loop_seen loop_prob third_copy_prob; prompts = N and of = FIELD in
//                          the table: prompts_mean prompts_median prompts_min prompts_max
//                          (FIELD over the first N sequences of that kind); a checkpoint trained on text
//                          (text_quantity.h): text_loss text_accuracy text_icl text_previous
//                          text_first text_duplicate text_induction text_best(_layer, _head)
//                          arcs_best(_layer, _head) arcs_count arcs_head arcs_previous_word
//                          arcs_nearest_noun arcs_chance text_ablate_* text_keep_*
//                          heldout_loss unigram_loss bigram_loss trigram_loss trigram_gap
//                          trigram_gap_se heldout_icl heldout_icl_se log_heldout_loss log_icl
//
// Adding a quantity: give its field a name in the kind's list in quantity.cpp (the
// [SECTION] Names lists: kTraceFields, kAlphaFields, ...), compute it in that kind's
// *_field function, and document it here and in lessons/FORMAT.md. A new kind needs a branch
// in is_known_quantity and Evaluator::evaluate (and quantity_uses_* when it needs a table).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "lessons/lesson.h"

namespace attnsim::lessons {

using Value = std::variant<double, std::vector<int64_t>, std::string>;
std::string format_value(const Value& value);

// True when `quantity` is a known name (step names and field names checked); otherwise
// `why` says what is wrong and lists the valid names.
bool is_known_quantity(const std::string& quantity, std::string* why);
// True for the quantities that need a `cost` / `flash` / `against` table.
bool quantity_uses_cost(const std::string& quantity);
bool quantity_uses_flash(const std::string& quantity);
bool quantity_uses_against(const std::string& quantity);

// Runs are cached by their resolved settings, so a lesson with many claims on the same
// state runs the engine once per state.
class Evaluator {
 public:
  Evaluator();
  ~Evaluator();
  // Computes the quantity with `base` (the step's settings) under the claim. Throws
  // attnsim::Error when the engine refuses the settings.
  Value evaluate(const Claim& claim, const Settings& base);
  // Checks the claim's condition; on failure `why` says what the engine computed.
  bool holds(const Claim& claim, const Settings& base, std::string* why);

 private:
  struct Cache;
  std::unique_ptr<Cache> cache_;
};

// Compares a value with the claim's condition (no engine run).
bool satisfies(const Claim& claim, const Value& value, std::string* why);

}  // namespace attnsim::lessons
