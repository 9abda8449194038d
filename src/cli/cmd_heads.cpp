// attnsim-cli heads / ablate: the head-role table of a checkpoint, and what knocking heads
// out costs.
#include <cstdio>

#include "commands.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "hf_commands.h"
#include "model/formats/hf_config.h"
#include "model/experiments/ablate.h"
#include "model/formats/checkpoint.h"
#include "model/training/heads.h"
#include "model/training/memory.h"
#include "model/training/tasks.h"
#include "model/experiments/text_ablation.h"
#include "model/experiments/text_measures.h"
#include "model/training/train.h"
#include "model_report.h"
#include "options.h"
#include "text_corpus.h"

namespace attnsim::cli {

Runner add_heads_command(CLI::App& app) {
  struct Args {
    std::string dir, mem_limit, corpus;
    bool json = false;
    HfInput hf;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("heads", "role scores of every head of a trained model (previous-token, induction, ...)");
  cmd->add_option("--model", a->dir, "checkpoint folder (e.g. assets/models/induction) or a Hugging Face folder")
      ->required()->check(not_empty());
  cmd->add_option("--mem-limit", a->mem_limit, "refuse models whose scoring needs more (e.g. 2G)")->check(mem_limit_size());
  cmd->add_flag("--json", a->json, "JSON instead of a table");
  add_hf_input_options(*cmd, a->hf, "a Hugging Face model's scores also on these tokens");
  cmd->add_option("--corpus", a->corpus, "a model trained on text: score it on this corpus's held-out split "
                  "(tools/corpus.py DIR), beside the unigram, bigram and trigram baselines with standard errors")->check(not_empty());
  return [a] {
    if (model::hf::is_hf_model_dir(a->dir))
      return run_hf_heads(a->dir, a->hf, a->mem_limit.empty() ? 0 : parse_size(a->mem_limit), a->json);
    refuse_hf_input(a->hf);
    // predicted from model.json before any .npy is read: a 1,024-head checkpoint is 17 MB on
    // disk and gigabytes of attention patterns
    const model::ModelConfig config = model::read_checkpoint_header(a->dir).config;
    const int64_t mem_limit = a->mem_limit.empty() ? 0 : parse_size(a->mem_limit);
    nlohmann::json meta;
    if (!a->corpus.empty()) {  // the checkpoint's own tokenizer reads the corpus
      const TextCorpus text = load_text_corpus(a->corpus, a->dir);
      // from the token counts, before anything is counted or the checkpoint is read
      check_fits(model::predict_text_report_bytes(config, static_cast<int64_t>(text.train->tokens.size()),
                                                  static_cast<int64_t>(text.heldout->tokens.size())),
                 mem_limit, "scoring this model and its counting baselines on the corpus", "");
      const model::Model m = model::load_checkpoint(a->dir, &meta);
      if (m.config.vocab != text.train->vocab)
        throw Error(a->dir + ": the model has " + std::to_string(m.config.vocab) + " tokens, its tokenizer.json " +
                    std::to_string(text.train->vocab));
      print_text_report(m, a->json, *text.train, *text.heldout, a->dir);
      return 0;
    }
    check_fits(model::predict_report_bytes(config), mem_limit, "scoring this model's heads", "");
    const model::Model m = model::load_checkpoint(a->dir, &meta);
    const std::optional<model::TaskSpec> task = model::recipe_task(meta);
    if (task && task->tasks == std::vector<model::Task>{model::Task::Text})  // the repeat table means nothing here
      throw Error(a->dir + " was trained on text: give --corpus DIR (tools/corpus.py DIR) to score it on held-out text");
    print_model_report(m, a->json, task);
    return 0;
  };
}

namespace {

void print_stats_row(const char* label, const model::LossStats& s, const model::LossStats& base) {
  const auto& first = s.parts[model::kFirst];
  const auto& rep = s.parts[model::kRepeat];
  std::printf("%-8s %8.4f %+8.4f %8.4f %+8.4f %8.1f%% %+8.1f\n", label, first.loss(),
              first.loss() - base.parts[model::kFirst].loss(), rep.loss(), rep.loss() - base.parts[model::kRepeat].loss(),
              100 * rep.accuracy(), 100 * (rep.accuracy() - base.parts[model::kRepeat].accuracy()));
}

nlohmann::json stats_json(const model::LossStats& s) {
  return {{"loss", s.all.loss()}, {"loss_first", s.parts[model::kFirst].loss()},
          {"loss_repeat", s.parts[model::kRepeat].loss()}, {"accuracy_repeat", s.parts[model::kRepeat].accuracy()},
          {"loss_copy", s.parts[model::kCopy].loss()}};
}

nlohmann::json text_ablation_json(const model::TextAblation& t) {
  nlohmann::json heads = nlohmann::json::array();
  for (const auto& h : t.heads) heads.push_back(std::to_string(h.layer) + "." + std::to_string(h.head));
  return {{"heads", heads}, {"loss", t.loss}, {"accuracy", t.accuracy}, {"kl", t.kl}, {"dloss", t.dloss},
          {"daccuracy", t.daccuracy}};
}

// ablate --corpus: a language model's heads knocked out on 32 held-out windows.
int run_text_ablation(const std::string& dir, const std::string& corpus, bool mean, bool json) {
  const TextCorpus text = load_text_corpus(corpus, dir);
  const model::Model m = model::load_checkpoint(dir);
  if (m.config.vocab != text.heldout->vocab)
    throw Error(dir + ": the model has " + std::to_string(m.config.vocab) + " tokens, its tokenizer.json " +
                std::to_string(text.heldout->vocab));
  const model::Batch w = model::text_windows(*text.heldout, m.config.seq_len, 32);
  const model::TextAblationReport r = model::ablate_text(m, w, mean);
  if (json) {
    nlohmann::json j{{"mode", mean ? "mean" : "zero"}, {"loss", r.loss}, {"accuracy", r.accuracy}, {"tokens", r.tokens},
                     {"each", nlohmann::json::array()}, {"together", nlohmann::json::array()}};
    for (const auto& e : r.each) j["each"].push_back(text_ablation_json(e));
    for (const auto& e : r.together) j["together"].push_back(text_ablation_json(e));
    std::printf("%s\n", j.dump(1).c_str());
    return 0;
  }
  std::printf("%s ablation on %lld held-out tokens: loss %.4f nats, top-1 accuracy %.1f%% as trained\n",
              mean ? "mean" : "zero", static_cast<long long>(r.tokens), r.loss, 100 * r.accuracy);
  std::printf("%-22s %9s %9s %9s\n", "heads", "Δloss", "Δacc pts", "KL");
  for (const auto& e : r.each)
    std::printf("%-22s %+9.4f %+9.2f %9.4f\n", text_ablation_json(e)["heads"][0].get<std::string>().c_str(), e.dloss,
                100 * e.daccuracy, e.kl);
  const char* names[] = {"least important 25%", "least important 50%", "least important 75%"};
  for (size_t i = 0; i < r.together.size(); ++i)
    std::printf("%-22s %+9.4f %+9.2f %9.4f   (%zu heads)\n", names[i], r.together[i].dloss, 100 * r.together[i].daccuracy,
                r.together[i].kl, r.together[i].heads.size());
  return 0;
}

}  // namespace

Runner add_ablate_command(CLI::App& app) {
  struct Args {
    std::string dir, heads, mode = "zero", mem_limit, corpus;
    bool json = false;
    HfInput hf;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("ablate", "knock heads out (zero or mean) and report the loss and repeat accuracy");
  cmd->add_option("--model", a->dir, "checkpoint folder, or a Hugging Face folder")->required()->check(not_empty());
  cmd->add_option("--heads", a->heads, "LAYER.HEAD,... ablated together; without it, each head alone (the full table)")
      ->check(not_empty());  // "" is not "each head alone"
  cmd->add_option("--mem-limit", a->mem_limit, "refuse models whose ablation needs more (e.g. 2G)")->check(mem_limit_size());
  cmd->add_option("--mode", a->mode, "zero | mean (the head's mean ctx over the evaluation batch)")->capture_default_str();
  cmd->add_flag("--json", a->json, "JSON instead of a table");
  add_hf_input_options(*cmd, a->hf, "a Hugging Face model: the text whose next-token loss is measured");
  cmd->add_option("--corpus", a->corpus, "a model trained on text: each head, then the least important quarter, half "
                  "and three quarters together, on this corpus's held-out split (Δloss, Δaccuracy, KL)")
      ->check(not_empty())->excludes("--heads");
  return [a] {
    if (a->mode != "zero" && a->mode != "mean") throw Error("--mode must be zero or mean, got '" + a->mode + "'");
    if (!a->corpus.empty()) return run_text_ablation(a->dir, a->corpus, a->mode == "mean", a->json);
    if (model::hf::is_hf_model_dir(a->dir))
      return run_hf_ablate(a->dir, a->hf, a->heads, a->mode == "mean", a->mem_limit.empty() ? 0 : parse_size(a->mem_limit),
                           a->json);
    refuse_hf_input(a->hf);
    const model::ModelConfig config = model::read_checkpoint_header(a->dir).config;
    if (!a->heads.empty()) (void)model::parse_heads(a->heads, config);  // refused before anything is loaded
    check_fits(model::predict_ablation_bytes(config), a->mem_limit.empty() ? 0 : parse_size(a->mem_limit),
                      "ablating this model's heads", "");
    const model::Model m = model::load_checkpoint(a->dir);
    const model::Batch batch = model::ablation_batch(m.config);
    const bool mean = a->mode == "mean";
    const model::LossStats base = model::cross_entropy(model::forward_finite(m, batch).logits, batch);
    if (base.parts[model::kRepeat].count == 0)  // an accuracy over no positions is not 0 %
      throw Error(a->dir + ": nothing to score: the model's " + std::to_string(m.config.seq_len) +
                  " positions hold no predictable repeat (ablation needs seq_len of at least 5)");
    std::vector<std::pair<std::string, model::LossStats>> rows;
    if (!a->heads.empty()) {
      model::Ablation ab;
      ab.heads = model::parse_heads(a->heads, m.config);
      ab.mean = mean;
      if (mean) ab.means = model::head_means(m, batch);
      rows.emplace_back(a->heads, model::evaluate_ablation(m, batch, ab).ablated);
    } else {
      for (const auto& r : model::ablate_each_head(m, batch, mean))
        rows.emplace_back(std::to_string(r.head.layer) + "." + std::to_string(r.head.head), r.stats);
    }
    if (a->json) {
      nlohmann::json j{{"mode", a->mode}, {"base", stats_json(base)}, {"ablated", nlohmann::json::array()}};
      for (const auto& [name, s] : rows) {
        nlohmann::json row = stats_json(s);
        row["heads"] = name;
        j["ablated"].push_back(row);
      }
      std::printf("%s\n", j.dump(1).c_str());
      return 0;
    }
    std::printf("%s ablation on %lld sequences (BOS, noise, r, r); loss in nats, accuracy on the predictable repeat\n",
                a->mode.c_str(), static_cast<long long>(batch.batch));
    std::printf("%-8s %8s %8s %8s %8s %9s %8s\n", "heads", "first", "Δ", "repeat", "Δ", "acc", "Δpts");
    print_stats_row("none", base, base);
    for (const auto& [name, s] : rows) print_stats_row(name.c_str(), s, base);
    return 0;
  };
}

}  // namespace attnsim::cli

namespace attnsim::cli {

Runner add_predict_command(CLI::App& app) {
  struct Args {
    std::string dir, mem_limit;
    int64_t k = 10;
    bool json = false;
    HfInput hf;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("predict", "a Hugging Face model's top-k next tokens after the given ones");
  cmd->add_option("--model", a->dir, "a Hugging Face folder (config.json + model.safetensors)")->required()->check(not_empty());
  cmd->add_option("--top-k", a->k, "how many predictions")->capture_default_str()->check(whole_number(1, 1000));
  cmd->add_option("--mem-limit", a->mem_limit, "refuse models that need more (e.g. 2G)")->check(mem_limit_size());
  cmd->add_flag("--json", a->json, "JSON instead of a table");
  add_hf_input_options(*cmd, a->hf, "the input");
  return [a] {
    if (!model::hf::is_hf_model_dir(a->dir))
      throw Error(a->dir + ": not a Hugging Face model folder (config.json and model.safetensors)");
    return run_hf_predict(a->dir, a->hf, a->k, a->mem_limit.empty() ? 0 : parse_size(a->mem_limit), a->json);
  };
}

}  // namespace attnsim::cli
