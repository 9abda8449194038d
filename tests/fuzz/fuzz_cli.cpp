// libFuzzer target: attnsim-cli's option parsing. The input is split into arguments at NUL
// bytes. (1) The real command tree parses them (commands are not run). (2) The model options
// of trace/flash/bench go through build_model and a forward pass under a 4 MiB memory limit:
// every size is checked and predicted before anything is allocated, so a hostile size is an
// Error and never an allocation.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/options.h"
#include "engine/error.h"

namespace {

std::vector<std::string> split_args(const uint8_t* data, size_t size) {
  std::vector<std::string> args;
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  if (!cur.empty()) args.push_back(cur);
  return args;
}

std::vector<char*> argv_of(std::vector<std::string>& args) {
  std::vector<char*> argv{const_cast<char*>("attnsim-cli")};
  for (auto& a : args) argv.push_back(a.data());
  return argv;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attnsim::cli;
  std::vector<std::string> args = split_args(data, size);
  if (args.size() > 64) return 0;
  // (1) the real tree
  {
    CLI::App app{"fuzz"};
    app.require_subcommand(1);
    const std::vector<Command> commands = add_commands(app);  // kept: they own the parsed options
    auto argv = argv_of(args);
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::Error&) {
    } catch (const attnsim::Error&) {
    }
  }
  // (2) the model options, built and run small
  CLI::App app{"fuzz"};
  ModelOptions o;
  add_model_options(app, o);
  auto argv = argv_of(args);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    if (!o.mem_limit.empty()) (void)parse_size(o.mem_limit);
    if (!o.input.empty() || !o.query.empty() || !o.weights.empty() || !o.mask_file.empty()) return 0;  // no files
    o.mem_limit = "4M";
    const Model m = build_model(o, attnsim::predict_trace_bytes);
    (void)attnsim::forward(m.config, m.weights, m.inputs);
  } catch (const CLI::Error&) {
  } catch (const attnsim::Error&) {
  }
  return 0;
}
