#include "model_name.h"

#include <nlohmann/json.hpp>

#include "engine/cost.h"
#include "engine/error.h"
#include "model/hf_config.h"
#include "model/hf_model.h"
#include "model/memory.h"
#include "options.h"

namespace attnsim::cli {

hub::HubOptions cli_hub_options(const std::string& name, int64_t mem_limit, ProgressLine& line) {
  hub::HubOptions o;
  o.check_weights = [name, mem_limit](const std::string& config_json, int64_t weight_bytes) {
    const nlohmann::json j = nlohmann::json::parse(config_json, nullptr, false);
    if (j.is_discarded()) throw Error(name + ": config.json is not JSON");
    const model::hf::HfConfig config = model::hf::parse_hf_config(j, name + " config.json");
    model::check_fits(model::hf::predict_hf_model_bytes(config, weight_bytes), mem_limit,
                      "loading " + name + " as float32 (" + human_bytes(weight_bytes) + " of weights to download)",
                      "nothing of the weights was downloaded");
  };
  o.progress = [&line](const hub::Progress& p) { line.update(p); };
  return o;
}

void resolve_model_option(CLI::App& command) {
  CLI::Option* model = command.get_option_no_throw("--model");
  if (!model || model->count() != 1) return;
  const std::string value = model->results().front();
  const CLI::Option* limit = command.get_option_no_throw("--mem-limit");
  const int64_t mem_limit = limit && limit->count() ? parse_size(limit->results().front()) : 0;
  ProgressLine line;
  const hub::Resolved r = hub::resolve_model(value, cli_hub_options(value, mem_limit, line));
  line.end();
  if (r.dir == value) return;
  model->clear();
  model->add_result(r.dir);
  model->run_callback();  // the command's variable now holds the folder
}

}  // namespace attnsim::cli
