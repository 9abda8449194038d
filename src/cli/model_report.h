// The report printed after `train` and by `heads`: repeat accuracy per length (unseen ones marked)
// or, for recall / gist, the task's held-out accuracy by part; then the head-role table
// (per-target-row and TransformerLens "mul" scores, the article's shares).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "model/heads.h"
#include "model/model.h"
#include "model/tasks.h"

namespace attnsim::cli {

nlohmann::json head_table_json(const model::HeadTable& table);
void print_head_table(const model::HeadTable& table);
// `trained`: the task the model was trained on. Induction: lengths outside its range are marked
// unseen; recall / gist: the repeat table gives way to the task's own held-out answers by part.
void print_model_report(const model::Model& model, bool json, const std::optional<model::TaskSpec>& trained);

}  // namespace attnsim::cli
