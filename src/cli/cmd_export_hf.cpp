// attnsim-cli export-hf: a checkpoint attnsim trained, written as a Hugging Face GPT-2 or Llama
// folder (model/hf_export.h) that every --model taking a Hugging Face folder then opens.
//   export-hf --model CKPT --out DIR [--tokenizer TOKDIR] [--force]
#include <cstdio>

#include "commands.h"
#include "engine/error.h"
#include "model/formats/checkpoint.h"
#include "model/formats/hf_export.h"
#include "options.h"
#include "staged_out.h"

namespace attnsim::cli {

namespace {

struct Args {
  std::string model, out, tokenizer;
  std::string dtype = "f32";
  bool force = false;
};

}  // namespace

Runner add_export_hf_command(CLI::App& app) {
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("export-hf", "write a checkpoint of GPT-2's or Llama's form as a Hugging Face GPT-2 or Llama folder");
  cmd->add_option("--model", a->model, "an attnsim checkpoint trained with --layernorm --mlp --tied, or --rmsnorm --rope θ --mlp --swiglu --no-bias")->required()->check(not_empty());
  cmd->add_option("--out", a->out, "the folder to write (config.json, model.safetensors, tokenizer files)")->required()->check(not_empty());
  cmd->add_option("--tokenizer", a->tokenizer, "a tokenizer folder to copy beside the weights (bpe-train writes one)")->check(not_empty());
  cmd->add_option("--dtype", a->dtype, "f32, or f16 (each weight rounded to the nearest half: half the bytes)")
      ->capture_default_str()->check(CLI::IsMember({"f32", "f16"}));
  cmd->add_flag("--force", a->force, "replace a folder that is not empty");
  return [a] {
    check_writable_folder(a->out, a->force);  // before any work
    const model::Model m = model::load_checkpoint(a->model);
    model::hf::export_hf(m, a->out, a->tokenizer, a->force, a->dtype == "f16");
    std::printf("%s: %s folder (%s) of %s (%lld layers, d_model %lld, %lld heads, vocabulary %lld)\n", a->out.c_str(),
                m.config.rmsnorm ? "Llama" : "GPT-2", a->dtype.c_str(), a->model.c_str(), static_cast<long long>(m.config.layers), static_cast<long long>(m.config.d_model),
                static_cast<long long>(m.config.heads), static_cast<long long>(m.config.vocab));
    return 0;
  };
}

}  // namespace attnsim::cli
