// attnsim-cli subcommands. Each lives in its own cmd_<name>.cpp and registers itself on the
// CLI11 app; main.cpp runs the one the user chose. A command's run function throws
// attnsim::Error for bad input (main prints the line and exits 2) and returns the exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace attnsim::cli {

using Runner = std::function<int()>;

// Each adds a subcommand to `app` and returns what runs it.
Runner add_trace_command(CLI::App& app);
Runner add_cost_command(CLI::App& app);
Runner add_bench_command(CLI::App& app);
Runner add_flash_command(CLI::App& app);
Runner add_lesson_command(CLI::App& app);
Runner add_train_command(CLI::App& app);
Runner add_heads_command(CLI::App& app);
Runner add_ablate_command(CLI::App& app);
Runner add_predict_command(CLI::App& app);
Runner add_bench_model_command(CLI::App& app);
Runner add_experiment_command(CLI::App& app);
Runner add_decode_command(CLI::App& app);
Runner add_bench_decode_command(CLI::App& app);
Runner add_gqa_convert_command(CLI::App& app);
Runner add_tokenize_command(CLI::App& app);
Runner add_lens_command(CLI::App& app);
Runner add_bpe_train_command(CLI::App& app);
Runner add_arcs_command(CLI::App& app);
Runner add_pull_command(CLI::App& app);
Runner add_export_hf_command(CLI::App& app);

// Every subcommand above, registered on `app` in --help order. The runners own the parsed
// options, so they must outlive app.parse().
struct Command {
  CLI::App* app;
  Runner run;
};
std::vector<Command> add_commands(CLI::App& app);
// slides, figure, animate (cmd_export.cpp): the app's figure exports. Kept out of
// attnsim_cli_core, so the option fuzzer and the other commands do not link the views.
std::vector<Command> add_export_commands(CLI::App& app);

}  // namespace attnsim::cli
