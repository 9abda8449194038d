#include "commands.h"

namespace attnsim::cli {

std::vector<Command> add_commands(CLI::App& app) {
  std::vector<Command> list;
  for (auto add : {add_trace_command, add_cost_command, add_bench_command, add_flash_command,
                   add_lesson_command, add_train_command, add_heads_command, add_ablate_command, add_predict_command, add_lens_command,
                   add_experiment_command, add_decode_command, add_bench_decode_command, add_bench_model_command,
                   add_gqa_convert_command, add_tokenize_command, add_bpe_train_command, add_arcs_command,
                   add_pull_command, add_export_hf_command}) {
    Runner run = add(app);
    list.push_back({app.get_subcommands({}).back(), std::move(run)});
  }
  return list;
}

}  // namespace attnsim::cli
