// attnsim-cli train: trains the tiny transformer on a built-in task and writes a checkpoint
// folder (model.json + one .npy per parameter + train_log.jsonl + checkpoints/step-N/).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>

#include "commands.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "model/formats/checkpoint.h"
#include "model/training/memory.h"
#include "model/training/train.h"
#include "model_report.h"
#include "options.h"
#include "staged_out.h"
#include "text_corpus.h"

namespace attnsim::cli {

namespace {

struct TrainArgs {
  model::ModelConfig config;
  model::TrainOptions train;
  std::string tasks = "induction";
  std::string mem_limit;
  std::string init;  // start from a checkpoint instead of fresh weights
  std::string recipe;  // train again with this checkpoint's config and recipe (model.json)
  int64_t stop_at = 0;  // end the run after this many steps, the schedule still the recipe's
  bool force = false;  // replace a non-empty --out
  bool json = false;
  int64_t bench = 0;  // time this many steps (after 5 of warm-up) instead of a real run
  std::string corpus, tokenizer;  // the text task's (text_corpus.h)
};

// One line per report on a pipe; a redrawn bar on a terminal.
void show_progress(const model::StepReport& r, int64_t total, bool tty) {
  const double rate = r.step / std::max(r.seconds, 1e-9);
  const double eta = (total - r.step) / std::max(rate, 1e-9);
  if (tty) {
    const int width = 30, filled = static_cast<int>(width * r.step / std::max<int64_t>(total, 1));
    std::fprintf(stderr, "\r[%s%s] %lld/%lld  %.1f steps/s  loss %.4f  ETA %.0fs ", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), static_cast<long long>(r.step), static_cast<long long>(total),
                 rate, r.loss, eta);
    if (r.step == total) std::fprintf(stderr, "\n");
  } else if (r.step % 250 == 0 || r.step == total) {
    std::fprintf(stderr, "step %lld/%lld  %.1f steps/s  loss %.4f  ETA %.0fs\n", static_cast<long long>(r.step),
                 static_cast<long long>(total), rate, r.loss, eta);
  }
}

// Per-step wall times of a run (data, forward, backward, AdamW: everything a step does).
int bench_steps(model::Model& m, model::TrainOptions t, int64_t n, bool json) {
  t.steps = n + 5;
  t.out_dir.clear();
  t.score_every = 0;
  std::vector<double> ms;
  double last = 0;
  model::TrainHooks hooks;
  hooks.on_step = [&](const model::StepReport& r) {
    if (r.step > 5) ms.push_back(1000 * (r.seconds - last));
    last = r.seconds;
  };
  model::train(m, t, hooks);
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  if (json)
    std::printf("{\"median_ms\": %.3f, \"steps\": %lld, \"params\": %lld}\n", median, static_cast<long long>(n),
                static_cast<long long>(model::param_count(m.config)));
  else
    std::printf("training step: median %.2f ms (%.1f steps/s) over %lld steps; min %.2f ms, max %.2f ms; %lld parameters\n",
                median, 1000 / median, static_cast<long long>(n), ms.front(), ms.back(),
                static_cast<long long>(model::param_count(m.config)));
  return 0;
}

// --recipe DIR: DIR's config (its seed included) and the recipe model.json keeps; what the
// recipe does not say (log and checkpoint cadence, --out) stays as given.
void use_recipe(const std::string& dir, model::ModelConfig& config, model::TrainOptions& t) {
  const model::CheckpointHeader header = model::read_checkpoint_header(dir);
  const std::optional<model::TrainOptions> recipe = model::recipe_options(header.meta);
  if (!recipe) throw Error(dir + "/model.json: no training recipe (\"train\") to repeat");
  config = header.config;
  model::TrainOptions o = *recipe;
  o.log_every = t.log_every;
  o.score_every = t.score_every;
  o.checkpoint_every = t.checkpoint_every;
  o.out_dir = t.out_dir;
  o.mem_limit = t.mem_limit;
  t = o;
}

// The text task's corpus, for a fresh run (--tokenizer) or a repeated one (the recipe's
// folder holds its tokenizer.json, and the recipe the sha256 the corpus must have).
TextCorpus text_task_inputs(const TrainArgs& a, const model::TrainOptions& t) {
  if (t.task.tasks != std::vector<model::Task>{model::Task::Text}) {
    if (!a.corpus.empty() || !a.tokenizer.empty()) throw Error("--corpus and --tokenizer are for --task text");
    return {};
  }
  if (a.corpus.empty()) throw Error("the text task trains on a corpus: give --corpus DIR (tools/corpus.py DIR writes it)");
  if (!a.recipe.empty()) {
    const nlohmann::json meta = model::read_checkpoint_header(a.recipe).meta;
    TextCorpus c = load_text_corpus(a.corpus, a.recipe);
    check_recipe_text(c, meta.at("train").value("text", nlohmann::json()));
    return c;
  }
  if (a.tokenizer.empty()) throw Error("the text task needs --tokenizer DIR (attnsim-cli bpe-train writes one)");
  return load_text_corpus(a.corpus, a.tokenizer);
}

}  // namespace

Runner add_train_command(CLI::App& app) {
  auto a = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "train the tiny transformer on a built-in task (hand-written backward, AdamW)");
  model::ModelConfig& c = a->config;
  model::TrainOptions& t = a->train;
  // Refused, not clamped: sizes from 1 (the model's validate() narrows them), counts from 0,
  // and at most 10^7 steps (about a week of training here) so a typo cannot run forever.
  const CLI::Validator size = whole_number(1, std::numeric_limits<int64_t>::max());
  const CLI::Validator count = whole_number(0, std::numeric_limits<int64_t>::max());
  const CLI::Validator steps = whole_number(0, 10'000'000);
  cmd->add_option("--task", a->tasks, "induction | copy-prev | recall | gist, or several joined by commas (sequences alternate)")->capture_default_str();
  cmd->add_option("--layers", c.layers, "layers")->capture_default_str()->check(size);
  cmd->add_option("--heads", c.heads, "heads per layer")->capture_default_str()->check(size);
  cmd->add_option("--kv-heads", c.kv_heads, "key/value heads g dividing --heads (GQA; 1 = MQA; default: heads)")->check(size);
  cmd->add_option("--d-model", c.d_model, "width of the residual stream")->capture_default_str()->check(size);
  cmd->add_option("--vocab", c.vocab, "tokens, BOS included")->capture_default_str()->check(size);
  cmd->add_option("--seq", c.seq_len, "positions (sequence length)")->capture_default_str()->check(size);
  cmd->add_flag("--layernorm", c.layernorm, "pre-LayerNorm before attention, MLP and unembedding");
  cmd->add_flag("--mlp", c.mlp, "a 4·d GELU MLP after each attention");
  cmd->add_flag("!--no-bias", c.bias, "linear maps without biases");
  cmd->add_flag("--tied", c.tied, "GPT-2's form: the unembedding is the embedding matrix, GPT-2's initialisation");
  cmd->add_flag("--rmsnorm", c.rmsnorm, "Llama's form: pre-RMSNorm where --layernorm puts LayerNorm, GPT-2's initialisation");
  cmd->add_flag("--swiglu", c.swiglu, "Llama's form: the MLP is SwiGLU, silu(gate·x) ⊙ (up·x), ff ≈ 8d/3 (needs --mlp)");
  cmd->add_flag("--torch-init", c.torch_init, "torch.nn's default initialisation (N(0,1) embeddings) even with --tied or --rmsnorm");
  cmd->add_option("--rope", c.rope_theta, "Llama's form: rotary positions on q and k with this base (e.g. 10000), no learned positions")
      ->check(real_number({1.0, 1e12}));
  cmd->add_option("--seed", c.seed, "initial weights")->capture_default_str()->check(seed_number());
  cmd->add_option("--init", a->init, "start from this checkpoint (its config wins over the size options)")->check(not_empty());
  cmd->add_option("--batch", t.batch, "sequences per step")->capture_default_str()->check(size);
  cmd->add_option("--steps", t.steps, "optimiser steps")->capture_default_str()->check(steps);
  // the ranges of model/adamw.h, the same a checkpoint's recipe is held to
  cmd->add_option("--lr", t.adamw.lr, "peak learning rate (above 0, at most 1)")->capture_default_str()
      ->check(real_number(model::kLrRange));
  cmd->add_option("--warmup", t.adamw.warmup, "linear warm-up steps")->capture_default_str()
      ->check(whole_number(0, model::kMaxWarmup));
  cmd->add_option("--weight-decay", t.adamw.weight_decay, "AdamW decoupled weight decay (matrices only; 0 to 1)")
      ->capture_default_str()->check(real_number(model::kWeightDecayRange));
  cmd->add_option("--clip", t.adamw.clip, "max global gradient norm (0 = off)")->capture_default_str()
      ->check(real_number(model::kClipRange));
  cmd->add_option("--data-seed", t.data_seed, "task data")->capture_default_str()->check(seed_number());
  cmd->add_option("--min-repeat", t.task.min_repeat, "induction: shortest repeated segment")->capture_default_str()->check(size);
  cmd->add_option("--max-repeat", t.task.max_repeat, "induction: longest repeated segment")->capture_default_str()->check(size);
  cmd->add_option("--holdout-repeats", t.task.holdout_repeats, "induction: lengths in the range never trained on (e.g. 5,11,17)")->delimiter(',')->check(size);
  cmd->add_option("--text-repeat-every", t.task.text_repeat_every,
                  "text: every Nth window repeats a span of its own text (--min-repeat..--max-repeat tokens), so "
                  "induction has something to learn (0 = never)")->capture_default_str()->check(whole_number(0, 1 << 20));
  cmd->add_option("--pairs", t.task.pairs, "recall / gist: key-value pairs (context tokens) before the queries")->capture_default_str()->check(size);
  cmd->add_option("--checkpoint-every", t.checkpoint_every, "save DIR/checkpoints/step-N every N steps (0 = only the end)")->capture_default_str()->check(count);
  cmd->add_option("--score-every", t.score_every, "head-role scores in the log every N steps")->capture_default_str()->check(count);
  cmd->add_option("--out", t.out_dir, "checkpoint folder to write: new or empty (the run is renamed into place when it ends)")
      ->check(not_empty());
  cmd->add_flag("--force", a->force, "replace a non-empty --out folder (only once the new run finished)");
  cmd->add_option("--mem-limit", a->mem_limit, "refuse runs that need more (e.g. 2G)")->check(mem_limit_size());
  cmd->add_flag("--json", a->json, "print the final report as JSON");
  cmd->add_option("--bench", a->bench, "time N training steps (after 5 warm-up steps): median ms per step; writes nothing")->check(whole_number(1, 1'000'000));
  for (const char* size : {"--layers", "--heads", "--kv-heads", "--d-model", "--vocab", "--seq", "--layernorm", "--mlp",
                           "--no-bias", "--tied", "--rmsnorm", "--swiglu", "--rope", "--torch-init", "--seed"})
    cmd->get_option(size)->excludes("--init");  // the checkpoint's config wins: a size given too would be ignored
  cmd->add_option("--corpus", a->corpus, "text task: folder with train.txt, heldout.txt and SHA256SUMS (tools/corpus.py)")
      ->check(not_empty());
  cmd->add_option("--tokenizer", a->tokenizer, "text task: folder with tokenizer.json (bpe-train); sets the vocabulary")
      ->check(not_empty())->excludes("--vocab");
  cmd->add_option("--recipe", a->recipe,
                  "train again from fresh weights with this checkpoint's config and recipe (model.json): the same bits "
                  "as the run that made it")->check(not_empty())->excludes("--init");
  for (const char* option : {"--task", "--layers", "--heads", "--kv-heads", "--d-model", "--vocab", "--seq", "--layernorm",
                             "--mlp", "--no-bias", "--tied", "--rmsnorm", "--swiglu", "--rope", "--torch-init", "--seed", "--batch", "--steps", "--lr", "--warmup", "--weight-decay",
                             "--clip", "--data-seed", "--min-repeat", "--max-repeat", "--holdout-repeats", "--pairs", "--tokenizer",
                             "--text-repeat-every"})
    cmd->get_option(option)->excludes("--recipe");  // the recipe says it
  cmd->add_option("--stop-at", a->stop_at, "end after N steps, the learning-rate schedule still that of --steps")
      ->check(whole_number(1, 10'000'000));
  cmd->get_option("--bench")->excludes("--out");  // a benchmark writes nothing
  cmd->get_option("--force")->needs("--out");
  return [a] {
    model::TrainOptions& t = a->train;
    t.task.tasks.clear();
    std::stringstream ss(a->tasks);
    for (std::string name; std::getline(ss, name, ',');) t.task.tasks.push_back(model::parse_task(name));
    if (!a->mem_limit.empty()) t.mem_limit = parse_size(a->mem_limit);
    model::ModelConfig recipe_config;
    if (!a->recipe.empty()) use_recipe(a->recipe, recipe_config, t);
    const TextCorpus text = text_task_inputs(*a, t);  // read and checked before anything else
    t.task.text = text.train;
    t.heldout = text.heldout;
    // Everything is checked and the memory predicted from the options (or --init's header)
    // before the model exists: init_model of a 16384-wide, 256-layer model is itself 1 TB.
    const model::ModelConfig config_given = !a->recipe.empty() ? recipe_config
                                      : a->init.empty()  ? a->config
                                                         : model::read_checkpoint_header(a->init).config;
    model::ModelConfig config = config_given;
    if (text.train && a->recipe.empty() && a->init.empty()) config.vocab = text.train->vocab;  // the tokenizer's
    model::validate(config);
    t.task.vocab = config.vocab;
    t.task.len = config.seq_len;
    model::validate(t.task);
    const int64_t report = a->bench > 0 ? 0 : model::predict_report_bytes(config);
    check_fits(std::max(model::predict_train_bytes(config, t), report), t.mem_limit,
                      "training this model", "lower --batch, --seq, --vocab or the model size");
    const bool tty = isatty(STDERR_FILENO);
    auto run = [&](model::Model& m) {
      model::TrainHooks hooks;
      hooks.on_step = [&](const model::StepReport& r) { show_progress(r, t.steps, tty); };
      const int64_t stop_at = a->stop_at;
      hooks.stop = [stop_at, steps = int64_t{0}]() mutable { return stop_requested() || (stop_at > 0 && steps++ >= stop_at); };
      model::train(m, t, hooks);
    };
    model::Model m;
    auto make_model = [&] { m = a->init.empty() ? model::init_model(config) : model::load_checkpoint(a->init); };
    if (a->bench > 0) {
      make_model();
      return bench_steps(m, t, a->bench, a->json);
    }
    if (t.out_dir.empty()) {
      make_model();
      run(m);
    } else {
      const std::string out = t.out_dir;
      run_staged(out, a->force, [&](const std::string& tmp) {  // --out is checked before the model exists
        make_model();
        t.out_dir = tmp;
        run(m);
        if (text.train)  // the run folder decodes its own tokens
          std::filesystem::copy_file(text.tokenizer_json, std::filesystem::path(tmp) / "tokenizer.json");
      });
      t.out_dir = out;
    }
    if (text.train)
      print_text_report(m, a->json, *text.train, *text.heldout,
                        std::filesystem::path(text.tokenizer_json).parent_path().string());
    else
      print_model_report(m, a->json, t.task);
    return 0;
  };
}

}  // namespace attnsim::cli
