// attnsim-cli: the engine, headless. `attnsim-cli --help` lists the subcommands.
// Bad input of any kind prints one line and exits 2; nothing half-written is left behind.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <new>

#include "commands.h"
#include "engine/blas_kernels.h"
#include "engine/error.h"
#include "model_name.h"

namespace {

// --version: the program, the BLAS and its kernel set, the sgemm rate measured now, and a
// warning when the kernels are weaker than the CPU (bench says it too; other commands keep
// their output as it is).
std::string version_text() {
  const attnsim::BlasKernels& blas = attnsim::blas_kernels();
  char rate[96];
  std::snprintf(rate, sizeof rate, "sgemm 2048x512x512: %.1f GFLOP/s (median of 5)",
                attnsim::measure_sgemm_gflops());
  return std::string("attnsim-cli ") + ATTNSIM_VERSION + "\nBLAS: " + blas.summary() + "\n" + rate +
         (blas.warning.empty() ? "" : "\nwarning: " + blas.warning);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace attnsim::cli;
  (void)attnsim::blas_kernels();  // the BLAS kernels are chosen before anything else runs (blas_kernels.h)
  CLI::App app{"attnsim-cli: multi-head attention, step by step, headless"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text, "print the version, the BLAS kernels in use and their sgemm rate");
  std::vector<Command> commands = add_commands(app);
  for (Command& c : add_export_commands(app)) commands.push_back(std::move(c));
  try {
    std::string valid;
    bool known = false;
    for (const auto& c : commands) {
      valid += (valid.empty() ? "" : ", ") + c.app->get_name();
      known = known || (argc > 1 && c.app->get_name() == argv[1]);
    }
    if (argc > 1 && argv[1][0] != '-' && !known) {
      throw attnsim::Error(std::string("unknown command '") + argv[1] + "' (valid: " + valid + ")");
    }
    app.parse(argc, argv);
    for (const auto& c : commands) {
      if (!c.app->parsed()) continue;
      resolve_model_option(*c.app);  // --model ORG/NAME -> its folder (model_name.h)
      return c.run();
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "attnsim-cli: %s (see --help)\n", attnsim::one_line(e.what()).c_str());
    return 2;
  } catch (const attnsim::Error& e) {
    std::fprintf(stderr, "attnsim-cli: %s\n", attnsim::one_line(e.what()).c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "attnsim-cli: out of memory (lower the sizes or --mem-limit)\n");
    return 2;
  } catch (const std::exception& e) {  // a library's own error (filesystem, JSON): still one line
    std::fprintf(stderr, "attnsim-cli: %s\n", attnsim::one_line(e.what()).c_str());
    return 2;
  }
  return 2;
}
