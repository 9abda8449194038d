// The report printed after `train` and by `heads`: held-out repeat accuracy and the
// head-role table (per-target-row and TransformerLens "mul" scores, the article's shares).
#pragma once

#include <nlohmann/json.hpp>

#include "model/heads.h"
#include "model/model.h"

namespace attnsim::cli {

nlohmann::json head_table_json(const model::HeadTable& table);
void print_head_table(const model::HeadTable& table);
void print_model_report(const model::Model& model, bool json);

}  // namespace attnsim::cli
