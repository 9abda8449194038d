#include "model_report.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

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
                       const model::TextStream& heldout) {
  const int64_t T = m.config.seq_len;
  const model::Batch windows = model::text_windows(heldout, T, INT64_MAX);  // the whole split
  const model::TextEval e = model::evaluate_text(m, windows);
  const model::NgramLoss n = model::ngram_baselines(train, windows);
  // the training log's batches (train.cpp): 32 windows, and 32 lines of 32 tokens twice
  const model::HeadTable text = model::score_heads(m, model::text_windows(heldout, T, 32));
  const model::HeadTable repeated =
      model::score_heads(m, model::repeated_text(heldout, std::min<int64_t>(32, (T - 1) / 2), 32));
  if (json) {
    const nlohmann::json out{{"heldout", {{"loss", e.loss}, {"tokens", e.tokens}, {"windows", windows.batch},
                                          {"early", e.early}, {"late", e.late}, {"icl", e.icl}}},
                             {"baselines", {{"unigram", n.unigram}, {"bigram", n.bigram}}},
                             {"heads", head_table_json(text)},
                             {"heads_repeated", head_table_json(repeated)}};
    std::printf("%s\n", out.dump(1).c_str());
    return;
  }
  std::printf("held-out loss %.4f nats/token over %lld tokens (%lld windows of %lld); unigram %.4f, bigram %.4f\n",
              e.loss, static_cast<long long>(e.tokens), static_cast<long long>(windows.batch), static_cast<long long>(T),
              n.unigram, n.bigram);
  std::printf("in-context learning: late positions %.4f - early %.4f = %+.4f nats\n", e.late, e.early, e.icl);
  std::printf("\nheads on held-out text:\n");
  print_head_table(text);
  std::printf("\nheads on held-out lines repeated (EOS, r, r):\n");
  print_head_table(repeated);
}

}  // namespace attnsim::cli
