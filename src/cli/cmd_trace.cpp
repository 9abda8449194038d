// attnsim-cli trace: run one forward pass and print every step (or dump it).
#include <cstdio>
#include <limits>
#include <tuple>

#include "commands.h"
#include "engine/atomic_file.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "engine/trace_json.h"
#include "model/formats/checkpoint.h"
#include "model/pass/whole_models.h"
#include "model/training/memory.h"
#include "model/training/tasks.h"
#include "model/pass/hf_forward.h"
#include "model/text/tokenizer.h"
#include "hf_input.h"
#include "options.h"
#include "whole_commands.h"
#include "table.h"

namespace attnsim::cli {

namespace {

struct TraceOptions {
  ModelOptions model;
  std::string dump;
  bool force = false;
  bool json = false;
  std::string checkpoint;  // --model DIR: one layer of a trained model instead of random weights
  int64_t layer = 0;
  std::string text = "the cat sat. the cat sat.";
  HfInput hf;  // a Hugging Face folder's input: --tokens, or --text when given
  bool whole = false;  // --whole: every step of the whole pass (cmd_trace_whole.cpp)
  model::SamplingOptions sampling;
};

// One layer of a Hugging Face model on the given tokens: the whole model runs (each layer's
// input is the residual stream before it), and layer L keeps its whole trace.
std::pair<MhaConfig, ForwardResult> trace_hf_layer(const TraceOptions& o) {
  const model::hf::HfConfig config = model::hf::read_hf_config(o.checkpoint);
  if (o.layer < 0 || o.layer >= config.layers)
    throw Error("--layer " + std::to_string(o.layer) + " is outside the model (layers 0.." +
                std::to_string(config.layers - 1) + ")");
  const std::vector<int32_t> tokens = hf_input_tokens(o.hf, o.checkpoint, config);
  const int64_t T = static_cast<int64_t>(tokens.size());
  const model::hf::HfModel m = model::hf::load_hf_checked(o.checkpoint, model::hf::predict_hf_forward_bytes(config, T, false),
                                               o.model.mem_limit.empty() ? 0 : parse_size(o.model.mem_limit),
                                               "tracing this model");
  model::hf::HfForwardOptions fo;
  fo.keep_layer = o.layer;
  ForwardResult r;
  r.trace = std::move(model::hf::hf_forward(m, tokens, fo).traces[static_cast<size_t>(o.layer)]);
  return {model::hf::hf_attention_config(config, T), std::move(r)};
}

// One layer's attention of a trained model on BOS + the text's characters: the same 25 steps,
// with the layer's real input (the residual stream) and weights.
std::pair<MhaConfig, ForwardResult> trace_model_layer(const TraceOptions& o) {
  const model::ModelConfig config = model::read_checkpoint_header(o.checkpoint).config;
  if (o.layer < 0 || o.layer >= config.layers)
    throw Error("--layer " + std::to_string(o.layer) + " is outside the model (layers 0.." +
                std::to_string(config.layers - 1) + ")");
  const std::vector<int32_t> tokens = model::encode(o.text, config.vocab);
  // the model and one forward of the text, predicted from the header before any .npy is read
  const int64_t need = checked_add(model::checkpoint_bytes(config),
                                   model::predict_forward_bytes(config, 1, static_cast<int64_t>(tokens.size())));
  check_fits(need, o.model.mem_limit.empty() ? 0 : parse_size(o.model.mem_limit), "tracing this model", "");
  const model::Model m = model::load_checkpoint(o.checkpoint);
  const model::Batch batch = model::batch_from_tokens({tokens});
  model::Activations acts = model::forward_finite(m, batch);
  ForwardResult r;
  r.trace = std::move(acts.layers[static_cast<size_t>(o.layer)].attn);
  return {model::attention_config(m.config, batch.batch, batch.len), std::move(r)};
}

std::string bytes_cell(const Step& s) {
  switch (s.kind) {
    case StepKind::View: return "0";
    case StepKind::Copy: return human_bytes(s.copied_bytes) + " copied";
    case StepKind::Skipped: return "";
    default: return s.new_bytes ? human_bytes(s.new_bytes) : "shared";
  }
}

void print_table(const MhaConfig& c, const ForwardResult& r) {
  std::printf("multi-head attention: B=%lld Tq=%lld Tk=%lld d_model=%lld h=%lld d_k=%lld  %s%s  mask=%s  bug=%s\n",
              (long long)c.batch, (long long)c.tq, (long long)c.tk, (long long)c.d_model,
              (long long)c.heads, (long long)c.head_dim(), c.self_attention ? "self" : "cross",
              c.bias ? "" : " no-bias", format_mask_spec(c.mask).c_str(), bug_name(c.bug));
  Table table({"step", "op", "shape", "strides", "kind", "bytes", "storage", "NaN", "-inf"});
  for (const Step& s : r.trace.steps) {
    if (s.skipped()) {
      table.add({s.name, s.op, "-", "-", "skipped", "", "", "", s.note.empty() ? "" : "(" + s.note + ")"});
      continue;
    }
    table.add({s.name, s.op, format_dims(s.out.shape()), format_dims(s.out.strides()),
               step_kind_name(s.kind), bytes_cell(s), "#" + std::to_string(s.storage_id),
               std::to_string(s.nan_count), std::to_string(s.neginf_count)});
  }
  table.print();
  const std::string first_nan = r.trace.first_nan_step();
  std::printf("held by the trace: %s (views cost nothing; each copy is held once)\n",
              format_bytes(r.trace.held_bytes()).c_str());
  if (!first_nan.empty()) std::printf("NaN first appears at: %s\n", first_nan.c_str());
  if (!r.error.empty()) std::printf("stopped: %s\n", r.error.c_str());
}

}  // namespace

Runner add_trace_command(CLI::App& app) {
  auto opts = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "run one forward pass and show every named step");
  add_model_options(*cmd, opts->model);
  std::vector<CLI::Option*> sizes;  // with --model the checkpoint gives every size: they would be ignored
  for (CLI::Option* opt : cmd->get_options())
    if (opt->get_name() != "--mem-limit" && opt->get_name() != "--seed" && opt->get_name().rfind("--", 0) == 0 &&
        opt->get_name() != "--help")
      sizes.push_back(opt);
  cmd->add_option("--dump", opts->dump, "write DIR/<step>.npy for every step that ran and DIR/trace.json (DIR new or empty)")->check(not_empty());
  cmd->add_flag("--force", opts->force, "with --dump: replace a folder that is not empty");
  cmd->add_flag("--json", opts->json, "print the trace as JSON");
  CLI::Option* model = cmd->add_option("--model", opts->checkpoint,
                                       "a trained checkpoint or a Hugging Face folder: trace one of its layers (sizes come from it)")
      ->check(not_empty());
  for (CLI::Option* opt : sizes) opt->excludes(model);
  cmd->add_option("--layer", opts->layer, "with --model: which layer")->capture_default_str()->needs(model)
      ->check(whole_number(0, std::numeric_limits<int32_t>::max()));
  CLI::Option* text = cmd->add_option("--text", opts->text,
                                      "with --model: the input (a checkpoint: one token per character after BOS; "
                                      "a Hugging Face folder: its tokenizer)")
                          ->capture_default_str()->needs(model);
  cmd->add_option("--tokens", opts->hf.tokens, "with a Hugging Face --model: the input as token ids, e.g. 3,1,4")
      ->check(not_empty())->needs(model)->excludes(text);
  CLI::Option* whole = cmd->add_flag("--whole", opts->whole,
                                     "with --model: every step of the whole pass (embeddings, each block's norms, attention, "
                                     "residuals and MLP, the final norm, logits and sampling); --dump writes OUT/<step>.npy "
                                     "and OUT/layer_<L>/<step>.npy")
                           ->needs(model);
  const CLI::Validator count = whole_number(1, std::numeric_limits<int64_t>::max());
  cmd->add_option("--temperature", opts->sampling.temperature,
                  "with --whole: the probs step's temperature; 0 means greedy (next_token = the arg max)")
      ->capture_default_str()->needs(whole);
  cmd->add_option("--top-k", opts->sampling.top_k, "with --whole: keep the K most likely tokens (1..vocabulary; default all)")
      ->check(count)->needs(whole);
  cmd->add_option("--top-p", opts->sampling.top_p, "with --whole: keep the most likely tokens until their mass reaches P, in (0, 1]")
      ->capture_default_str()->needs(whole);
  return [opts, text, cmd] {
    if (opts->whole) {
      WholeTraceArgs a;
      a.model = opts->checkpoint;
      a.in = opts->hf;
      // a checkpoint reads the default text; a folder needs --tokens or --text
      if (text->count() > 0 || (a.in.tokens.empty() && !model::hf::is_hf_model_dir(a.model))) a.in.text = opts->text;
      a.sampling = opts->sampling;
      a.sampling.seed = opts->model.seed;
      a.mem_limit = opts->model.mem_limit.empty() ? 0 : parse_size(opts->model.mem_limit);
      a.dump = opts->dump;
      a.force = opts->force;
      a.json = opts->json;
      return run_whole_trace(a);
    }
    if (!opts->checkpoint.empty() && cmd->count("--seed") > 0)
      throw Error("--seed with --model seeds --whole's sampling; a model's weights are its own");
    MhaConfig config;
    ForwardResult r;
    if (!opts->checkpoint.empty() && model::hf::is_hf_model_dir(opts->checkpoint)) {
      if (text->count() > 0) opts->hf.text = opts->text;
      std::tie(config, r) = trace_hf_layer(*opts);
    } else if (!opts->checkpoint.empty()) {
      if (!opts->hf.tokens.empty()) throw Error("--tokens takes a Hugging Face folder; an attnsim checkpoint reads --text");
      std::tie(config, r) = trace_model_layer(*opts);
    } else {
      const Model m = build_model(opts->model, predict_trace_bytes);
      config = m.config;
      r = forward(m.config, m.weights, m.inputs, backend_by_name(opts->model.backend));
    }
    const nlohmann::json j = trace_to_json(config, r.trace);
    if (!opts->dump.empty())
      write_folder_atomically(opts->dump, [&](const std::string& dir) {
        dump_steps(r.trace, dir);
        write_file_atomically(dir + "/trace.json", j.dump(2) + "\n");
      }, opts->force);
    if (opts->json) std::printf("%s\n", j.dump(2).c_str());
    else print_table(config, r);
    return 0;
  };
}

}  // namespace attnsim::cli
