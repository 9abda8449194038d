#include "model/experiments/hf_experiments.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/checked.h"
#include "engine/error.h"
#include "model/experiments/hf_eval.h"
#include "model/pass/hf_forward.h"

namespace attnsim::model::hf {

namespace {

std::string fixed(double v, int digits) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::vector<std::vector<int32_t>> sequences(const HfConfig& c, const HfExperimentOptions& o) {
  std::vector<std::vector<int32_t>> out;
  for (int64_t s = 0; s < o.sequences; ++s) out.push_back(repeated_random_tokens(c, o.repeat_len, o.seed + static_cast<uint64_t>(s)));
  return out;
}

// −log softmax(row)[target] in double, and whether target is the row's arg max
std::pair<double, bool> scored(const float* row, int64_t V, int32_t target) {
  float top = row[0];
  int64_t arg = 0;
  for (int64_t v = 1; v < V; ++v)
    if (row[v] > top) top = row[v], arg = v;
  double sum = 0;
  for (int64_t v = 0; v < V; ++v) sum += std::exp(static_cast<double>(row[v]) - top);
  return {std::log(sum) - (static_cast<double>(row[target]) - top), arg == target};
}

ExperimentResult roles(const HfModel& m, const HfExperimentOptions& o) {
  const HeadTable t = score_hf_heads_repeated(m, o.repeat_len, o.sequences, o.seed);
  ExperimentResult r{"roles", "head    role              prev   induction   first\n", {}, nlohmann::json::array()};
  int with_role = 0, induction = 0, previous = 0, first = 0;
  for (int64_t l = 0; l < t.layers; ++l)
    for (int64_t h = 0; h < t.heads; ++h) {
      const HeadScores& s = t.at(l, h);
      const std::string role = role_label(s);
      with_role += role != "mixed";
      induction += role == "induction";
      previous += role == "previous-token";
      first += role == "first-token";
      char line[160];
      std::snprintf(line, sizeof line, "%lld.%lld   %-16s %6.2f   %9.2f   %5.2f\n", static_cast<long long>(l),
                    static_cast<long long>(h), role.c_str(), s.previous, s.induction, s.first);
      r.table += line;
      r.json.push_back({{"layer", l}, {"head", h}, {"role", role}, {"previous", s.previous}, {"induction", s.induction},
                        {"duplicate", s.duplicate}, {"first", s.first}, {"diagonal", s.diagonal}});
    }
  r.conclusion = {conclusions::kRolesOnRepeats,
                  {std::to_string(with_role), std::to_string(t.cells.size()), std::to_string(induction),
                   std::to_string(previous), std::to_string(first)}};
  return r;
}

ExperimentResult ablation(const HfModel& m, const HfExperimentOptions& o) {
  const HfConfig& c = m.config;
  const RepeatQuality base = repeat_quality(m, o);
  ExperimentResult r{"ablation", "head   Δloss(repeat)  Δacc(points)  verdict\n", {}, nlohmann::json::array()};
  int free_heads = 0, critical = 0;
  for (int64_t l = 0; l < c.layers; ++l)
    for (int64_t h = 0; h < c.heads; ++h) {
      std::vector<std::vector<HeadPatch>> patches(static_cast<size_t>(c.layers));
      patches[static_cast<size_t>(l)].push_back(HeadPatch{h, {}});  // zero ablation
      const RepeatQuality q = repeat_quality(m, o, patches);
      const double dl = q.loss_repeat - base.loss_repeat, dp = 100 * (q.accuracy_repeat - base.accuracy_repeat);
      add_ablation_row(r, HeadRef{l, h}, dl, dp, free_heads, critical);
    }
  // the baselines beside the base: chance on the first copy, the model's own first copy
  char line[240];
  std::snprintf(line, sizeof line,
                "\nwith every head: repeat loss %.4f, accuracy %.1f%%; first copy loss %.4f (uniform ln V = %.4f, "
                "chance 1/V = %.4f%%)\n",
                base.loss_repeat, 100 * base.accuracy_repeat, base.loss_first, std::log(static_cast<double>(c.vocab)),
                100.0 / static_cast<double>(c.vocab));
  r.table += line;
  const int64_t n = c.layers * c.heads;
  r.conclusion = {conclusions::kAblationCounts, {std::to_string(free_heads), std::to_string(n), std::to_string(critical),
                                                 fixed(100 * base.accuracy_repeat, 1)}};
  return r;
}

ExperimentResult sink(const HfModel& m, const HfExperimentOptions& o) {
  return sink_result(score_hf_heads_repeated(m, o.repeat_len, o.sequences, o.seed));
}

}  // namespace

RepeatQuality repeat_quality(const HfModel& m, const HfExperimentOptions& o,
                             const std::vector<std::vector<HeadPatch>>& patches) {
  const HfConfig& c = m.config;
  RepeatQuality q;
  double correct = 0;
  for (const std::vector<int32_t>& tokens : sequences(c, o)) {
    HfForwardOptions f;
    f.keep_layer = c.layers;  // no layer's whole trace
    f.patches = patches;
    const Tensor logits = hf_forward(m, tokens, f).logits;  // (T,V)
    const int64_t b = c.bos >= 0 ? 1 : 0, L = (static_cast<int64_t>(tokens.size()) - b) / 2;
    for (int64_t t = 0; t + 1 < static_cast<int64_t>(tokens.size()); ++t) {
      const bool first = t + 1 >= b && t + 1 < b + L;       // target in the first copy
      const bool repeat = t >= b + L && t + 1 < b + 2 * L;  // target r[1..L-1] of the second
      if (!first && !repeat) continue;
      const auto [loss, hit] = scored(logits.f32() + t * c.vocab, c.vocab, tokens[static_cast<size_t>(t + 1)]);
      if (first) q.loss_first += loss, ++q.first_targets;
      else q.loss_repeat += loss, correct += hit, ++q.repeat_targets;
    }
  }
  if (q.first_targets) q.loss_first /= static_cast<double>(q.first_targets);
  if (q.repeat_targets) q.loss_repeat /= static_cast<double>(q.repeat_targets), q.accuracy_repeat = correct / static_cast<double>(q.repeat_targets);
  return q;
}

int64_t predict_hf_experiment_bytes(const std::string& name, const HfConfig& c, const HfExperimentOptions& o) {
  if (name == "streaming")
    throw Error("experiment streaming runs the toy model's cache policies and cannot use a Hugging Face folder "
                "(roles, ablation and sink can)");
  if (std::find(kExperimentNames.begin(), kExperimentNames.end(), name) == kExperimentNames.end())
    (void)run_experiment(name, {});  // the unknown-name error, with the valid names
  if (!uses_model_dir(name))
    throw Error("experiment " + name + " trains its own models and cannot use --model (on a Hugging Face folder: "
                "roles, ablation and sink)");
  const int64_t T = static_cast<int64_t>(repeated_random_tokens(c, o.repeat_len, o.seed).size());
  // score_hf_heads_repeated keeps every sequence's alpha; the others one pass at a time
  return checked_mul(o.sequences, predict_hf_forward_bytes(c, T, false));
}

ExperimentResult run_hf_experiment(const std::string& name, const HfModel& m, const HfExperimentOptions& o) {
  (void)predict_hf_experiment_bytes(name, m.config, o);  // the refusals
  if (name == "roles") return roles(m, o);
  if (name == "ablation") return ablation(m, o);
  return sink(m, o);
}

}  // namespace attnsim::model::hf
