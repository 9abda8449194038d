#include "model_report.h"

#include <cstdio>

#include "model/train.h"
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

void print_model_report(const model::Model& m, bool json) {
  const model::HeadTable table = model::score_heads(m, model::scoring_batch(m.config));
  std::vector<int64_t> repeats;
  for (int64_t L = 4; 2 * L + 1 <= m.config.seq_len && L < m.config.vocab - 1; L += 4) repeats.push_back(L);
  const auto evals = model::evaluate_repeats(m, repeats);
  if (json) {
    nlohmann::json ev = nlohmann::json::array();
    for (const auto& e : evals)
      ev.push_back({{"repeat", e.repeat}, {"accuracy", e.accuracy}, {"loss_repeat", e.loss_repeat}, {"loss_first", e.loss_first}});
    std::printf("%s\n", nlohmann::json{{"heads", head_table_json(table)}, {"repeat_eval", ev}}.dump(1).c_str());
    return;
  }
  std::printf("repeat accuracy (predictable part of the second copy):");
  for (const auto& e : evals) std::printf("  L=%lld %.1f%%", static_cast<long long>(e.repeat), 100 * e.accuracy);
  std::printf("\n");
  print_head_table(table);
}

}  // namespace attnsim::cli
