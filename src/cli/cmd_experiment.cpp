// attnsim-cli experiment NAME: the article's claims about heads, run on the toy model
// (model/experiments.h). Prints a table and a one-line conclusion; --json writes JSON.
#include <unistd.h>

#include <cstdio>
#include <limits>

#include "commands.h"
#include "model/formats/checkpoint.h"
#include "model/experiments/experiments.h"
#include "model/formats/hf_config.h"
#include "model/experiments/hf_experiments.h"
#include "hf_input.h"
#include "options.h"
#include "staged_out.h"

namespace attnsim::cli {

namespace {

// A Hugging Face folder: the experiments that read a model (roles, ablation, sink; "all" is
// those three), on repeated random sequences (model/hf_experiments.h).
template <class Args>
int run_hf(const Args& a, int64_t mem_limit) {
  const std::vector<std::string> todo = a.name == "all" ? std::vector<std::string>{"roles", "ablation", "sink"}
                                                        : std::vector<std::string>{a.name};
  const model::hf::HfConfig config = model::hf::read_hf_config(a.model_dir);
  const model::hf::HfExperimentOptions o;
  int64_t bytes = 0;
  for (const std::string& name : todo) bytes = std::max(bytes, model::hf::predict_hf_experiment_bytes(name, config, o));
  if (!a.out.empty()) check_writable_file(a.out);
  const model::hf::HfModel m = model::hf::load_hf_checked(a.model_dir, bytes, mem_limit, "experiment " + a.name);
  nlohmann::json all = nlohmann::json::object();
  for (const std::string& name : todo) {
    const model::ExperimentResult r = model::hf::run_hf_experiment(name, m, o);
    all[name] = {{"rows", r.json}, {"conclusion", r.conclusion.text()}};
    if (!a.json) std::printf("== %s\n%s%s\n\n", name.c_str(), r.table.c_str(), r.conclusion.text().c_str());
  }
  if (a.json) std::printf("%s\n", all.dump(1).c_str());
  if (!a.out.empty()) model::write_text_file(a.out, all.dump(1) + "\n");
  return 0;
}

}  // namespace

Runner add_experiment_command(CLI::App& app) {
  struct Args {
    std::string name, model_dir, out, mem_limit;
    model::ExperimentOptions o;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  a->o.train.steps = 1500;
  std::string names;
  for (const std::string& n : model::kExperimentNames) names += (names.empty() ? "" : " | ") + n;
  CLI::App* cmd = app.add_subcommand("experiment", "the article's head experiments on the toy model (trains models as needed)");
  const CLI::Validator size = whole_number(1, std::numeric_limits<int64_t>::max());  // refused, not clamped
  cmd->add_option("name", a->name, names + " | all")->required();
  cmd->add_option("--model", a->model_dir, "roles / ablation / sink / streaming: use this checkpoint instead of training one; or a Hugging Face folder (roles, ablation, sink on repeated random tokens)")
      ->check(not_empty());
  cmd->add_option("--steps", a->o.train.steps, "training steps for every model the experiment trains")->capture_default_str()->check(whole_number(1, 10'000'000));  // as train --steps
  cmd->add_option("--batch", a->o.train.batch, "sequences per step")->capture_default_str()->check(size);
  cmd->add_option("--lr", a->o.train.adamw.lr, "peak learning rate (above 0, at most 1)")->capture_default_str()
      ->check(real_number(model::kLrRange));  // as train --lr
  cmd->add_option("--d-model", a->o.base.d_model, "width of every model")->capture_default_str()->check(size);
  cmd->add_option("--layers", a->o.base.layers, "layers of every model")->capture_default_str()->check(size);
  cmd->add_option("--heads", a->o.base.heads, "heads of the base model")->capture_default_str()->check(size);
  cmd->add_option("--seed", a->o.base.seed, "initial weights")->capture_default_str()->check(seed_number());
  cmd->add_option("--out", a->out, "also write the JSON to this file")->check(not_empty());
  cmd->add_option("--mem-limit", a->mem_limit, "refuse experiments whose models need more (e.g. 2G)")->check(mem_limit_size());
  cmd->add_flag("--json", a->json, "print JSON instead of tables");
  // with --model nothing is trained: the training options would be ignored
  for (const char* opt : {"--steps", "--batch", "--lr", "--d-model", "--layers", "--heads", "--seed"})
    cmd->get_option(opt)->excludes("--model");
  return [a] {
    std::vector<std::string> todo = a->name == "all" ? model::kExperimentNames : std::vector<std::string>{a->name};
    a->o.model_dir = a->model_dir;
    // every refusal before the first progress line: the names, the options, the memory, --out
    const int64_t mem_limit = a->mem_limit.empty() ? 0 : parse_size(a->mem_limit);
    if (!a->model_dir.empty() && model::hf::is_hf_model_dir(a->model_dir)) return run_hf(*a, mem_limit);
    for (const std::string& name : todo) model::check_experiment(name, a->o, mem_limit);
    if (!a->out.empty()) check_writable_file(a->out);
    a->o.progress = [](const std::string& what) { std::fprintf(stderr, "  %s...\n", what.c_str()); };
    nlohmann::json all = nlohmann::json::object();
    for (const std::string& name : todo) {
      const model::ExperimentResult r = model::run_experiment(name, a->o);
      all[name] = {{"rows", r.json}, {"conclusion", r.conclusion.text()}};
      if (!a->json) std::printf("== %s\n%s%s\n\n", name.c_str(), r.table.c_str(), r.conclusion.text().c_str());
    }
    if (a->json) std::printf("%s\n", all.dump(1).c_str());
    if (!a->out.empty()) model::write_text_file(a->out, all.dump(1) + "\n");
    return 0;
  };
}

}  // namespace attnsim::cli
