// The report printed after `train` and by `heads`: repeat accuracy per length (unseen ones marked)
// or, for recall / gist, the task's held-out accuracy by part, or for text, the held-out loss
// beside counting baselines; then the head-role table
// (per-target-row and TransformerLens "mul" scores, the article's shares).
#pragma once

#include <string>

#include <nlohmann/json.hpp>
#include <optional>

#include "model/training/heads.h"
#include "model/pass/forward.h"
#include "model/training/tasks.h"
#include "model/training/text_task.h"

namespace attnsim::cli {

nlohmann::json head_table_json(const model::HeadTable& table);
void print_head_table(const model::HeadTable& table);
// `trained`: the task the model was trained on. Induction: lengths outside its range are marked
// unseen; recall / gist: the repeat table gives way to the task's own held-out answers by part.
void print_model_report(const model::Model& model, bool json, const std::optional<model::TaskSpec>& trained);
// A language model's report (the text task): its loss on every held-out window beside the
// unigram, bigram and trigram baselines counted on `train`, with model − baseline and its
// standard error over windows; ICL with its standard error; the head-role tables on held-out
// windows and on held-out lines repeated; induction on the second copy's rows of every
// repeated held-out line, and the behavioural test (experiments/text_measures.h); the repeat
// prompts (experiments/repeat_prompts.h) through the tokenizer in `tokenizer_dir`.
void print_text_report(const model::Model& model, bool json, const model::TextStream& train,
                       const model::TextStream& heldout, const std::string& tokenizer_dir);

}  // namespace attnsim::cli
