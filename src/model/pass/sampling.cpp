#include "model/pass/sampling.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>
#include <numeric>

#include "engine/error.h"
#include "engine/forward_steps.h"
#include "engine/random.h"
#include "engine/vector_exp.h"

namespace attnsim::model {

namespace {

std::string number(double v) {  // 1e+308, not its 309 digits
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

}  // namespace

void validate_sampling(const SamplingOptions& o, int64_t V) {
  const double t = o.temperature;
  if (std::isnan(t)) throw Error("--temperature is NaN: give 0 (greedy) or a positive number");
  if (t < 0) throw Error("--temperature " + number(t) + " is negative: give 0 (greedy) or a positive number");
  if (t > FLT_MAX)
    throw Error("--temperature " + number(t) + " overflows float32 (largest 3.4e38): logits / temperature would be 0");
  if (t > kMaxTemperature)
    throw Error("--temperature " + number(t) + " is above " + number(kMaxTemperature) +
                " (every distribution is then near uniform)");
  if (o.top_k < 0 || o.top_k > V)
    throw Error("--top-k " + std::to_string(o.top_k) + " is outside the vocabulary (1.." + std::to_string(V) + ")");
  if (!(o.top_p > 0 && o.top_p <= 1)) throw Error("--top-p must lie in (0, 1], got " + number(o.top_p));
}

namespace {

// The first n ids of the one ranking every filter uses: logit descending, id ascending on ties.
// Selected, then only they sorted (O(V + n log n)): the filters read only the head of the
// ranking, and a stable sort of Qwen2's 151,936 logits took 16 ms, a whole frame, on every
// change of a sampling control.
std::vector<int32_t> ranked_head(const float* l, int64_t V, int64_t n) {
  std::vector<int32_t> ids(static_cast<size_t>(V));
  std::iota(ids.begin(), ids.end(), 0);
  const auto before = [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); };
  if (n < V) std::nth_element(ids.begin(), ids.begin() + n, ids.end(), before);
  std::sort(ids.begin(), ids.begin() + n, before);
  ids.resize(static_cast<size_t>(n));
  return ids;
}

int32_t arg_max(const float* l, int64_t V) {
  int64_t best = 0;
  for (int64_t i = 1; i < V; ++i)
    if (l[i] > l[best]) best = i;  // strictly greater: the lowest id wins a tie
  return static_cast<int32_t>(best);
}

std::vector<float> normalised(const std::vector<double>& w) {
  const double z = std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<float> p(w.size());
  for (size_t i = 0; i < w.size(); ++i) p[i] = static_cast<float>(w[i] / z);
  return p;
}

}  // namespace

SampledRow sample_row(const float* l, int64_t V, const SamplingOptions& o) {
  SampledRow r;
  if (o.temperature <= 0) {
    r.next = arg_max(l, V);
    return r;
  }
  const double mx = *std::max_element(l, l + V);
  std::vector<double> w(static_cast<size_t>(V));  // exp((l − max)/t), the unnormalised probabilities
  for (int64_t i = 0; i < V; ++i) w[i] = std::exp((l[i] - mx) / o.temperature);
  // top-k: keep the weights of the k best ranked, zero the rest
  const int64_t k = o.top_k > 0 ? o.top_k : V;
  if (k < V) {
    std::vector<double> kept(static_cast<size_t>(V), 0.0);
    for (int32_t id : ranked_head(l, V, k)) kept[id] = w[id];
    w.swap(kept);
  }
  r.top_k = normalised(w);
  // top-p: down the ranking, keep a token while the kept mass before it is below p; the
  // ranking's head grows (64, 512, 4096, ...) until the kept mass reaches p inside it
  if (o.top_p < 1) {
    const double z = std::accumulate(w.begin(), w.end(), 0.0);
    for (int64_t n = std::min<int64_t>(64, k);; n = std::min(k, 8 * n)) {
      const std::vector<int32_t> head = ranked_head(l, V, n);
      double before = 0;
      int64_t j = 0;
      while (j < n && before < o.top_p) before += w[head[static_cast<size_t>(j++)]] / z;
      if (before < o.top_p && n < k) continue;  // p not reached inside this head: a longer one
      std::vector<uint8_t> keep(static_cast<size_t>(V), 0);
      for (int64_t i = 0; i < j; ++i) keep[head[static_cast<size_t>(i)]] = 1;
      for (int64_t i = 0; i < V; ++i)
        if (!keep[i]) w[i] = 0;
      break;
    }
  }
  r.top_p = normalised(w);
  // the seeded draw, in id order over the kept weights
  double z = 0;
  for (double v : w) z += v;
  const double u = random_uniform(o.seed, static_cast<uint64_t>(Stream::Token), static_cast<uint64_t>(o.step)) * z;
  double acc = 0;
  r.next = arg_max(l, V);  // u·z rounding past the total: the most likely kept token
  for (int64_t i = 0; i < V; ++i)
    if (w[i] > 0 && (acc += w[i]) > u) {
      r.next = static_cast<int32_t>(i);
      break;
    }
  return r;
}

// [SECTION] probabilities

Tensor softmax_at(const Tensor& logits, double temperature) {
  const int64_t T = logits.size(1), V = logits.size(2);
  const float inv = static_cast<float>(temperature > 0 ? 1.0 / temperature : 1.0);
  Tensor p = Tensor::empty({1, T, V});  // (1,T,V)
  const Tensor x = logits.contiguous();
  for (int64_t t = 0; t < T; ++t) {
    const float* in = x.f32() + t * V;
    float* out = p.f32() + t * V;
    const float mx = *std::max_element(in, in + V);
    for (int64_t i = 0; i < V; ++i) out[i] = (in[i] - mx) * inv;  // ≤ 0, the max at 0
    const float z = exp_shifted_sum(out, 0.0f, out, V);
    const float rz = 1.0f / z;
    for (int64_t i = 0; i < V; ++i) out[i] *= rz;
  }
  return p;
}

Tensor softmax_at_reference(const Tensor& logits, double temperature) {
  const int64_t T = logits.size(1), V = logits.size(2);
  const double t = temperature > 0 ? temperature : 1.0;
  Tensor p = Tensor::empty({1, T, V});
  for (int64_t r = 0; r < T; ++r) {
    double mx = -INFINITY, z = 0;
    for (int64_t i = 0; i < V; ++i) mx = std::max(mx, static_cast<double>(logits.at({0, r, i})));
    for (int64_t i = 0; i < V; ++i) z += std::exp((logits.at({0, r, i}) - mx) / t);
    for (int64_t i = 0; i < V; ++i) p.f32()[r * V + i] = static_cast<float>(std::exp((logits.at({0, r, i}) - mx) / t) / z);
  }
  return p;
}

// [SECTION] the steps

Trace sampling_trace(const Tensor& logits, const SamplingOptions& o) {
  const int64_t T = logits.size(1), V = logits.size(2);
  const bool greedy = o.temperature <= 0;
  Trace tr;
  tr.add(made_step("probs", greedy ? "softmax (greedy: shown at temperature 1)" : "softmax(logits / " + number(o.temperature) + ")",
                   {"logits"}, StepKind::Compute, softmax_at(logits, o.temperature), "cpu"));
  const Tensor last = logits.narrow(1, T - 1, 1).contiguous();  // (1,1,V)
  const SampledRow r = sample_row(last.f32(), V, o);
  auto filter = [&](const char* name, const std::string& op, const char* input, const std::vector<float>& row) {
    tr.add(greedy ? skipped_step(name, op, {input}, "greedy: temperature 0")
                  : made_step(name, op, {input}, StepKind::Compute, Tensor::from_values({1, V}, row), "cpu"));
  };
  filter("top_k", "keep the " + std::to_string(o.top_k > 0 ? o.top_k : V) + " most likely, renormalise", "probs", r.top_k);
  filter("top_p", "keep the most likely until their mass reaches " + number(o.top_p) + ", renormalise", "top_k", r.top_p);
  tr.add(made_step("next_token", greedy ? "arg max (lowest id on ties)" : "seeded draw (seed " + std::to_string(o.seed) + ")",
                   {greedy ? "logits" : "top_p"}, StepKind::Compute, Tensor::from_values({1, 1}, {static_cast<float>(r.next)}), "cpu"));
  return tr;
}

}  // namespace attnsim::model
