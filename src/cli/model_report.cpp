#include "model_report.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "model/experiments/ngram.h"
#include "model/experiments/repeat_prompts.h"
#include "model/experiments/text_measures.h"
#include "model/training/train.h"
#include "table.h"

namespace attnsim::cli {

nlohmann::json head_table_json(const model::HeadTable& t) {
  nlohmann::json heads = nlohmann::json::array();
  for (int64_t l = 0; l < t.layers; ++l)
    for (int64_t h = 0; h < t.heads; ++h) {
      const model::HeadScores& s = t.at(l, h);
      heads.push_back({{"layer", l}, {"head", h}, {"role", model::role_label(s)},
                       {"previous", s.previous}, {"induction", s.induction}, {"duplicate", s.duplicate},
                       {"previous_mul", s.previous_mul}, {"induction_mul", s.induction_mul},
                       {"duplicate_mul", s.duplicate_mul}, {"diagonal", s.diagonal},
                       {"previous_share", s.previous_share}, {"first", s.first}, {"entropy", s.entropy}});
    }
  return heads;
}

void print_head_table(const model::HeadTable& t) {
  std::printf("%-5s %-16s %6s %6s %6s   %6s %6s %6s   %6s %6s %6s %7s\n", "head", "role", "prev", "induc", "dup",
              "prev*", "induc*", "dup*", "diag", "first", "p.shr", "entropy");
  for (int64_t l = 0; l < t.layers; ++l)
    for (int64_t h = 0; h < t.heads; ++h) {
      const model::HeadScores& s = t.at(l, h);
      std::printf("%lld.%-3lld %-16s %6.3f %6.3f %6.3f   %6.3f %6.3f %6.3f   %6.3f %6.3f %6.3f %7.3f\n",
                  static_cast<long long>(l), static_cast<long long>(h), model::role_label(s).c_str(), s.previous,
                  s.induction, s.duplicate, s.previous_mul, s.induction_mul, s.duplicate_mul, s.diagonal, s.first,
                  s.previous_share, s.entropy);
    }
  std::printf("scores per target row; * = TransformerLens \"mul\" score Σ(A⊙D)/ΣA over all rows\n");
}

namespace {

// recall / gist: the answers' loss and accuracy by part, on held-out sequences of the task
// (gist-first apart: the later gist answers can be copied from it).
void print_task_report(const model::Model& m, bool json, model::TaskSpec task, const model::HeadTable& table) {
  task.vocab = m.config.vocab;
  task.len = m.config.seq_len;
  const model::LossStats ls = model::evaluate_task(m, task);
  nlohmann::json parts = nlohmann::json::object();
  for (int p = 0; p < model::kPartCount; ++p) {
    const model::PartStats& s = ls.parts[static_cast<size_t>(p)];
    if (s.count == 0 || p == model::kOther) continue;
    parts[model::part_name(p)] = {{"count", s.count}, {"loss", s.loss()}, {"accuracy", s.accuracy()}};
    if (!json)
      std::printf("held-out %-10s %6lld answers  loss %.4f  accuracy %5.1f%%\n", model::part_name(p),
                  static_cast<long long>(s.count), s.loss(), 100 * s.accuracy());
  }
  if (json) {
    std::printf("%s\n", nlohmann::json{{"heads", head_table_json(table)}, {"task_eval", parts}}.dump(1).c_str());
    return;
  }
  print_head_table(table);
}

}  // namespace

void print_model_report(const model::Model& m, bool json, const std::optional<model::TaskSpec>& trained) {
  const model::HeadTable table = model::score_heads(m, model::scoring_batch(m.config));
  if (trained && model::uses_pairs(trained->tasks)) return print_task_report(m, json, *trained, table);
  // lengths are marked seen or unseen only for a model trained on induction
  const bool induction = trained && std::find(trained->tasks.begin(), trained->tasks.end(), model::Task::Induction) !=
                                        trained->tasks.end();
  const std::optional<model::TaskSpec> recipe = induction ? trained : std::nullopt;
  // every length a sequence holds twice (distinct tokens), each marked seen or unseen in training
  std::vector<int64_t> repeats;
  for (int64_t L = 2; 2 * L + 1 <= m.config.seq_len && L < m.config.vocab; ++L) repeats.push_back(L);
  const auto evals = model::evaluate_repeats(m, repeats);
  std::vector<model::RepeatEval> unseen;
  for (const auto& e : evals)
    if (recipe && !recipe->trains_on(e.repeat)) unseen.push_back(e);
  if (json) {
    nlohmann::json ev = nlohmann::json::array();
    for (const auto& e : evals) {
      ev.push_back({{"repeat", e.repeat}, {"accuracy", e.accuracy}, {"loss_repeat", e.loss_repeat}, {"loss_first", e.loss_first}});
      if (recipe) ev.back()["trained"] = recipe->trains_on(e.repeat);
    }
    nlohmann::json out{{"heads", head_table_json(table)}, {"repeat_eval", ev}};
    if (!unseen.empty()) out["unseen_accuracy"] = model::pooled_accuracy(unseen);
    std::printf("%s\n", out.dump(1).c_str());
    return;
  }
  if (evals.empty())  // no length fits twice: an accuracy here would be 0 % of nothing
    std::printf("repeat accuracy: nothing to score (%lld positions hold no repeated segment of 2 or more tokens)",
                static_cast<long long>(m.config.seq_len));
  else
    std::printf("repeat accuracy, predictable part of the second copy%s:",
                recipe ? " (* = length never trained on)" : " (training lengths unknown)");
  for (size_t i = 0; i < evals.size(); ++i) {
    const auto& e = evals[i];
    std::printf("%s L=%2lld%s%5.1f%%", i % 8 == 0 ? "\n " : "", static_cast<long long>(e.repeat),
                recipe && !recipe->trains_on(e.repeat) ? "*" : " ", 100 * e.accuracy);
  }
  std::printf("\n");
  if (!unseen.empty()) std::printf("unseen lengths together: %.1f%%\n", 100 * model::pooled_accuracy(unseen));
  print_head_table(table);
}

void print_text_report(const model::Model& m, bool json, const model::TextStream& train,
                       const model::TextStream& heldout, const std::string& tokenizer_dir) {
  const int64_t T = m.config.seq_len;
  const model::Batch windows = model::text_windows(heldout, T, INT64_MAX);  // the whole split
  std::vector<double> each;  // the model's loss per target, as windows.targets
  const model::TextEval e = model::evaluate_text(m, windows, &each);
  const model::BlockMean icl = model::icl_over_windows(windows, each);
  const model::NgramLoss n = model::ngram_baselines(train, windows);
  struct Baseline {
    const char* key;
    const char* name;
    double loss;
    model::BlockMean diff;  // model − baseline per target, SE over windows
  };
  const Baseline bases[] = {
      {"unigram", "unigram (add-one)", n.unigram, model::paired_difference(windows, each, n.unigram_each)},
      {"bigram", "bigram (interpolated Witten-Bell)", n.bigram, model::paired_difference(windows, each, n.bigram_each)},
      {"trigram_ad", "trigram (interpolated absolute discounting, D = 0.75)", n.trigram_ad,
       model::paired_difference(windows, each, n.trigram_ad_each)},
      {"trigram_kn", "trigram (interpolated Kneser-Ney, D = 0.75)", n.trigram_kn,
       model::paired_difference(windows, each, n.trigram_kn_each)}};
  // the training log's batches (train.cpp): 32 windows, and 32 lines of R = 32 tokens twice;
  // the second copy's rows and the behavioural test on every held-out line of R tokens or more
  const int64_t R = std::min<int64_t>(32, (T - 1) / 2);
  const model::HeadTable text = model::score_heads(m, model::text_windows(heldout, T, 32));
  const model::HeadTable repeated = model::score_heads(m, model::repeated_text(heldout, R, 32));
  const model::RepeatedLines lines = model::evaluate_repeated_lines(m, heldout, R);
  const auto best = [&](const std::vector<double>& v) {
    return static_cast<int64_t>(std::max_element(v.begin(), v.end()) - v.begin());
  };
  const int64_t best_all = best(lines.second_copy), best_log = best(lines.second_copy_log);
  const int64_t best_copy = best(lines.copy_only), best_copy_log = best(lines.copy_only_log);
  const auto head_name = [&](int64_t k) {
    return std::to_string(k / m.config.heads) + "." + std::to_string(k % m.config.heads);
  };
  const std::vector<model::PromptResult> prompts = model::run_repeat_prompts(m, model::hf::load_tokenizer(tokenizer_dir));
  const auto block_json = [](const model::BlockMean& b) {
    return nlohmann::json{{"mean", b.mean}, {"se", b.se}, {"blocks", b.blocks}, {"beyond_3se", b.beyond(3)}};
  };
  if (json) {
    nlohmann::json baselines, versus;
    for (const Baseline& b : bases) {
      baselines[b.key] = b.loss;
      versus[b.key] = block_json(b.diff);
    }
    nlohmann::json per_head = nlohmann::json::array();
    for (size_t k = 0; k < lines.second_copy.size(); ++k)
      per_head.push_back({{"head", head_name(static_cast<int64_t>(k))}, {"all_lines", lines.second_copy[k]},
                          {"log_lines", lines.second_copy_log[k]}, {"copy_only_all_lines", lines.copy_only[k]},
                          {"copy_only_log_lines", lines.copy_only_log[k]}});
    nlohmann::json out{
        {"heldout", {{"loss", e.loss}, {"tokens", e.tokens}, {"windows", windows.batch},
                     {"early", e.early}, {"late", e.late}, {"icl", e.icl}, {"icl_se", icl.se}}},
        {"baselines", baselines},
        {"model_minus_baseline", versus},  // per target; mean and SE over the windows
        {"heads", head_table_json(text)},
        {"heads_repeated", head_table_json(repeated)},
        {"repeated_lines", {{"repeat", lines.repeat}, {"lines", lines.lines},
                            {"induction_second_copy", per_head},
                            {"loss_second_copy_with_first", lines.with_first},
                            {"loss_second_copy_alone", lines.alone},
                            {"with_minus_alone", block_json(lines.drop)}}}};
    nlohmann::json& pj = out["repeat_prompts"] = nlohmann::json::array();
    for (const model::PromptResult& r : prompts)
      pj.push_back({{"prompt", r.prompt.text}, {"expected", r.prompt.expected}, {"top", r.top},
                    {"p_expected", r.p_expected}, {"rank", r.rank}});
    std::printf("%s\n", out.dump(1).c_str());
    return;
  }
  const model::IclPositions p = model::icl_positions(T);
  std::printf("held-out loss %.4f nats/token over %lld tokens (%lld windows of %lld)\n", e.loss,
              static_cast<long long>(e.tokens), static_cast<long long>(windows.batch), static_cast<long long>(T));
  std::printf("\ncounting baselines (counted on the training split, scored on the same targets); model - baseline\n"
              "per target, ± its standard error over the %lld windows (blocks of %lld targets, not tokens):\n",
              static_cast<long long>(windows.batch), static_cast<long long>(T - 1));
  std::printf("%-54s %7s %18s %7s  %s\n", "baseline", "loss", "model - baseline", "z", "beyond 3 SE");
  for (const Baseline& b : bases)
    std::printf("%-54s %7.4f %+8.4f ± %7.4f %+7.1f  %s\n", b.name, b.loss, b.diff.mean, b.diff.se,
                b.diff.se > 0 ? b.diff.mean / b.diff.se : 0.0,
                !b.diff.beyond(3) ? "no" : b.diff.mean < 0 ? "yes, model lower" : "yes, model higher");
  std::printf("\nICL (in-context learning): mean loss at positions %lld..%lld %.4f - at %lld..%lld %.4f = %+.4f ± %.4f nats\n"
              "  (every held-out window; standard error over the %lld windows)\n",
              static_cast<long long>(p.late_from), static_cast<long long>(T - 2), e.late,
              static_cast<long long>(p.early_from), static_cast<long long>(p.early_to - 1), e.early, icl.mean, icl.se,
              static_cast<long long>(icl.blocks));
  std::printf("\nheads on held-out text:\n");
  print_head_table(text);
  std::printf("\nheads on held-out lines repeated (EOS, r, r; the first 32 lines of %lld tokens or more):\n",
              static_cast<long long>(R));
  print_head_table(repeated);
  std::printf("induc above: every row whose token occurred earlier, in both copies (the training log's figure)\n");
  std::printf("\ninduction on the second copy's rows only, best head: %s %.4f over all %lld held-out lines of %lld tokens "
              "or more; %s %.4f over the first 32\n",
              head_name(best_all).c_str(), lines.second_copy[static_cast<size_t>(best_all)],
              static_cast<long long>(lines.lines), static_cast<long long>(R), head_name(best_log).c_str(),
              lines.second_copy_log[static_cast<size_t>(best_log)]);
  std::printf("  scored on the copy's own next token only (A[i][i-%lld+1]): best head %s %.4f over all lines; %s %.4f "
              "over the first 32\n",
              static_cast<long long>(R), head_name(best_copy).c_str(), lines.copy_only[static_cast<size_t>(best_copy)],
              head_name(best_copy_log).c_str(), lines.copy_only_log[static_cast<size_t>(best_copy_log)]);
  std::printf("  per head (all lines, every earlier occurrence):");
  for (size_t k = 0; k < lines.second_copy.size(); ++k)
    std::printf("%s %s %.3f", k % 8 == 0 ? "\n   " : "", head_name(static_cast<int64_t>(k)).c_str(), lines.second_copy[k]);
  if (lines.drop.blocks == 0)
    std::printf("\nbehavioural test: nothing to score (lines of %lld tokens hold no predictable second copy)\n",
                static_cast<long long>(R));
  else
    std::printf("\nbehavioural test, loss on the second copy's tokens r[1..%lld] over the %lld lines: with the first copy "
                "before them %.4f,\n  the line alone (EOS, r) %.4f; with - alone %+.4f ± %.4f nats (standard error over lines)\n",
                static_cast<long long>(R - 1), static_cast<long long>(lines.lines), lines.with_first, lines.alone,
                lines.drop.mean, lines.drop.se);
  int64_t first = 0;
  for (const model::PromptResult& r : prompts) first += r.rank == 1;
  std::printf("\nrepeat prompts (after <|endoftext|>; copying an earlier occurrence gives the expected word): %lld of %zu "
              "first\n", static_cast<long long>(first), prompts.size());
  for (const model::PromptResult& r : prompts)
    std::printf("  %-72s expected %-12s p %.3f, rank %-5lld model: %s\n", ("\"" + r.prompt.text + "\"").c_str(),
                ("\"" + r.prompt.expected + "\"").c_str(), r.p_expected, static_cast<long long>(r.rank),
                ("\"" + r.top + "\"").c_str());
}

}  // namespace attnsim::cli
