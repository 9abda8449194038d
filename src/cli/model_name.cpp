#include "model_name.h"

#include "model/formats/hf_model.h"
#include "options.h"

namespace attnsim::cli {

hub::HubOptions cli_hub_options(const std::string& name, int64_t mem_limit, ProgressLine& line) {
  hub::HubOptions o;
  o.check_weights = [name, mem_limit](const std::string& config_json, int64_t weight_bytes) {
    model::hf::check_hf_download(name, config_json, weight_bytes, mem_limit);
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
