#include "text_ablation.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ablate.h"

namespace attnsim::model {

namespace {

// Per target: log-probabilities of the whole vocabulary, kept for the KL against each ablation.
struct Scored {
  double loss = 0, accuracy = 0, kl = 0;
};

// Log-softmax of every scored row of a forward pass over `windows`, (targets, V).
std::vector<std::vector<float>> log_probs(const Model& m, const Batch& w, const Ablation* ab) {
  const Tensor logits = forward_finite(m, w, ab).logits;  // (B,T,V) contiguous
  const int64_t V = m.config.vocab;
  std::vector<std::vector<float>> out;
  for (int64_t i = 0; i < w.batch * w.len; ++i) {
    if (w.targets[i] < 0) continue;
    const float* row = logits.f32() + i * V;
    const float mx = *std::max_element(row, row + V);
    double z = 0;
    for (int64_t v = 0; v < V; ++v) z += std::exp(static_cast<double>(row[v] - mx));
    const double lz = std::log(z) + mx;
    std::vector<float> lp(static_cast<size_t>(V));
    for (int64_t v = 0; v < V; ++v) lp[v] = static_cast<float>(row[v] - lz);
    out.push_back(std::move(lp));
  }
  return out;
}

Scored score(const std::vector<std::vector<float>>& lp, const std::vector<std::vector<float>>& base,
             const std::vector<int32_t>& targets) {
  Scored s;
  for (size_t i = 0; i < lp.size(); ++i) {
    const auto& row = lp[i];
    s.loss -= row[targets[i]];
    s.accuracy += std::max_element(row.begin(), row.end()) - row.begin() == targets[i];
    double kl = 0;
    for (size_t v = 0; v < row.size(); ++v) kl += std::exp(base[i][v]) * (base[i][v] - row[v]);
    s.kl += kl;
  }
  const double n = static_cast<double>(lp.size());
  return {s.loss / n, s.accuracy / n, s.kl / n};
}

std::vector<int32_t> targets_of(const Batch& w) {
  std::vector<int32_t> targets;
  for (int32_t t : w.targets)
    if (t >= 0) targets.push_back(t);
  return targets;
}

}  // namespace

TextAblation ablate_heads(const Model& m, const Batch& w, std::vector<HeadRef> heads) {
  const std::vector<int32_t> targets = targets_of(w);
  const auto base = log_probs(m, w, nullptr);
  const Scored trained = score(base, base, targets);
  Ablation ab;
  ab.heads = heads;
  const Scored s = score(log_probs(m, w, &ab), base, targets);
  return TextAblation{std::move(heads), s.loss, s.accuracy, s.kl, s.loss - trained.loss, s.accuracy - trained.accuracy};
}

TextAblationReport ablate_text(const Model& m, const Batch& w, bool mean) {
  const std::vector<int32_t> targets = targets_of(w);
  const auto base = log_probs(m, w, nullptr);
  const Scored trained = score(base, base, targets);
  TextAblationReport r;
  r.loss = trained.loss;
  r.accuracy = trained.accuracy;
  r.tokens = static_cast<int64_t>(targets.size());
  Ablation ab;
  ab.mean = mean;
  if (mean) ab.means = head_means(m, w);
  auto run = [&](std::vector<HeadRef> heads) {
    ab.heads = heads;
    const Scored s = score(log_probs(m, w, &ab), base, targets);
    return TextAblation{std::move(heads), s.loss, s.accuracy, s.kl, s.loss - trained.loss, s.accuracy - trained.accuracy};
  };
  for (int64_t l = 0; l < m.config.layers; ++l)
    for (int64_t h = 0; h < m.config.heads; ++h) r.each.push_back(run({{l, h}}));
  std::vector<size_t> order(r.each.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r.each[a].dloss < r.each[b].dloss; });
  for (int quarter = 1; quarter <= 3; ++quarter) {
    std::vector<HeadRef> heads;
    for (size_t k = 0; k < order.size() * static_cast<size_t>(quarter) / 4; ++k) heads.push_back(r.each[order[k]].heads[0]);
    r.together.push_back(run(heads));
  }
  return r;
}

}  // namespace attnsim::model
