// model.* fields of a checkpoint trained on text (the text task: its folder holds
// tokenizer.json), so the lesson on heads in real language states figures the checker
// recomputes. They read the held-out sample the app ships (assets/corpus/
// wordnet-heldout-sample.txt: 256 lines of the held-out split, each after <|endoftext|>,
// as its first 24 windows of the model's positions), the annotated arcs (assets/syntax: an AI assistant's, one annotator), and the
// run folder's heldout_report.json (the whole held-out split beside the counting baselines,
// written by `heads --corpus --json` and checked against the corpus by tests/lm).
//
//   text_loss text_accuracy        next-token loss (nats) and top-1 accuracy on the sample
//   text_icl                       in-context learning on the sample: late minus early loss
//   text_previous text_first       one head (layer, head): per-target-row scores on the sample
//   text_duplicate                 windows (model/heads.h)
//   text_induction                 one head, on sample lines of 24 tokens repeated (EOS r r)
//   text_best text_best_layer      the highest score of `role` (previous, first, duplicate,
//   text_best_head                 induction) over every head, and its head
//   arcs_best arcs_best_layer      on the arcs of relation `role` (det, amod, nsubj, obj; all
//   arcs_best_head arcs_count      when absent): the head that finds most, its share, the arcs
//   arcs_head                      head (layer, head)'s share
//   arcs_previous_word arcs_nearest_noun arcs_chance   the baselines on the same arcs
//   text_ablate_dloss text_ablate_daccuracy text_ablate_kl   `ablate` heads knocked out
//                                  (zeros) together on the sample: loss change, top-1 accuracy
//                                  change, mean KL(trained ‖ ablated) (model/text_ablation.h)
//   text_keep_dloss text_keep_daccuracy text_keep_kl        the model keeping only its `keep`
//                                  most important heads in all (by their own Δloss on the
//                                  sample), the others knocked out together
//   heldout_loss unigram_loss bigram_loss   heldout_report.json: the whole held-out split
//   trigram_loss trigram_gap trigram_gap_se  the Kneser–Ney trigram there, and the model's loss
//                                  minus it with its standard error over windows
//   heldout_icl heldout_icl_se     ICL over every held-out window, with its standard error
//   log_heldout_loss log_icl       the training log's line at `step`
#pragma once

#include <string>
#include <vector>

#include "lessons/lesson.h"
#include "lessons/quantity.h"
#include "model/pass/forward.h"

namespace attnsim::lessons {

const std::vector<std::string>& text_fields();
bool is_text_field(const std::string& field);
// The fields that read the table's keep (the caller refuses keep elsewhere).
bool text_field_reads_keep(const std::string& field);
// heldout_loss, the baselines, the gaps, heldout_icl*, log_*: files of the run folder, no weights loaded.
bool text_field_reads_run_files(const std::string& field);
// `dir`: the checkpoint folder (its tokenizer.json); `run`: its run folder (report, log); `m`
// and `dir` are not read for the run-file fields.
// Throws Error: a folder without tokenizer.json, a head outside the model, an unknown role
// or relation, a missing setting.
Value text_field(const model::Model& m, const std::string& dir, const std::string& run, const ModelSettings& settings,
                 const std::string& field);

}  // namespace attnsim::lessons
