// `--model ORG/NAME[@REV]` in every command that takes --model: resolved in this one place
// (main.cpp calls it on the command the user chose, after parsing and before it runs), so each
// command keeps reading a folder. The order (hub.h): a local folder of that name, the Hugging
// Face cache, the Hub. A download shows its progress (progress_line.h) and is refused before
// any weight byte when the model would not fit under the command's --mem-limit (default 75 %
// of memory). A value that is neither a folder nor a name is left for the command to refuse.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>

#include "hub/hub.h"
#include "progress_line.h"

namespace attnsim::cli {

// The hub's options for the CLI: the memory check (model::hf config + sizes) and `line`.
hub::HubOptions cli_hub_options(const std::string& name, int64_t mem_limit, ProgressLine& line);

// Rewrites the command's --model value to the folder it names, when it is a name.
void resolve_model_option(CLI::App& command);

}  // namespace attnsim::cli
