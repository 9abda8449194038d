#include "model/experiments/text_ablation.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "model/experiments/ablate.h"
#include "engine/vector_exp.h"

namespace attnsim::model {

namespace {

struct Scored {
  double loss = 0, accuracy = 0, kl = 0;
};

// Log-softmax of every scored row of a forward pass over `windows`: (targets, V) row-major,
// and with `probs`, their exponentials too (the trained distribution the KL is taken from).
struct LogProbs {
  int64_t rows = 0, V = 0;
  std::vector<float> lp, p;
};

LogProbs log_probs(const Model& m, const Batch& w, const Ablation* ab, bool probs = false) {
  const Tensor logits = forward_finite(m, w, ab).logits;  // (B,T,V) contiguous
  LogProbs out;
  out.V = m.config.vocab;
  const int64_t V = out.V;
  std::vector<float> e(static_cast<size_t>(V));
  for (int64_t i = 0; i < w.batch * w.len; ++i) {
    if (w.targets[i] < 0) continue;
    const float* row = logits.f32() + i * V;
    const float mx = *std::max_element(row, row + V);
    const float z = exp_shifted_sum(row, mx, e.data(), V);  // the vector exp, as softmax's
    const float lz = std::log(z);
    for (int64_t v = 0; v < V; ++v) out.lp.push_back(row[v] - mx - lz);
    if (probs)
      for (int64_t v = 0; v < V; ++v) out.p.push_back(e[static_cast<size_t>(v)] / z);
    ++out.rows;
  }
  return out;
}

Scored score(const LogProbs& lp, const LogProbs& base, const std::vector<int32_t>& targets) {
  Scored s;
  const int64_t V = lp.V;
  for (int64_t i = 0; i < lp.rows; ++i) {
    const float* row = lp.lp.data() + i * V;
    const float* b = base.lp.data() + i * V;
    const float* p = base.p.data() + i * V;
    s.loss -= row[targets[static_cast<size_t>(i)]];
    s.accuracy += std::max_element(row, row + V) - row == targets[static_cast<size_t>(i)];
    double kl = 0;
    for (int64_t v = 0; v < V; ++v) kl += static_cast<double>(p[v]) * (b[v] - row[v]);
    s.kl += kl;
  }
  const double n = static_cast<double>(lp.rows);
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
  const LogProbs base = log_probs(m, w, nullptr, true);
  const Scored trained = score(base, base, targets);
  Ablation ab;
  ab.heads = heads;
  const Scored s = score(log_probs(m, w, &ab), base, targets);
  return TextAblation{std::move(heads), s.loss, s.accuracy, s.kl, s.loss - trained.loss, s.accuracy - trained.accuracy};
}

TextAblationReport ablate_text(const Model& m, const Batch& w, bool mean) {
  const std::vector<int32_t> targets = targets_of(w);
  const LogProbs base = log_probs(m, w, nullptr, true);
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
