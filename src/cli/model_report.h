// The report printed after `train` and by `heads`: repeat accuracy per length (unseen ones marked) and the
// head-role table (per-target-row and TransformerLens "mul" scores, the article's shares).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "model/heads.h"
#include "model/model.h"
#include "model/tasks.h"

namespace attnsim::cli {

nlohmann::json head_table_json(const model::HeadTable& table);
void print_head_table(const model::HeadTable& table);
// `recipe`: the task the model was trained on, so lengths outside it are marked unseen.
void print_model_report(const model::Model& model, bool json, const std::optional<model::TaskSpec>& recipe);

}  // namespace attnsim::cli
