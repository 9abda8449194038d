// The counting baselines. See ngram.h.
#include "model/experiments/ngram.h"

#include <algorithm>
#include <cmath>

#include "engine/checked.h"
#include "engine/error.h"

namespace attnsim::model {

namespace {

// Distinct keys, sorted, and how often each occurs: n-grams as keys (u·V + v)·V + w or v·V + w,
// where a V×V table would be 72 MB and a V×V×V one out of reach.
struct Counted {
  std::vector<uint64_t> keys;
  std::vector<int64_t> counts;
};

// Sorts `keys` in place and folds each run into one key and its count.
Counted fold(std::vector<uint64_t> keys) {
  std::sort(keys.begin(), keys.end());
  Counted c;
  c.counts.reserve(keys.size());  // at most one per key: the bound predict_ngram_bytes counts
  size_t out = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (out > 0 && keys[out - 1] == keys[i]) {
      ++c.counts.back();
      continue;
    }
    keys[out++] = keys[i];
    c.counts.push_back(1);
  }
  keys.resize(out);
  c.keys = std::move(keys);
  return c;
}

// The index of `key`, or -1.
int64_t find(const std::vector<uint64_t>& keys, uint64_t key) {
  const auto it = std::lower_bound(keys.begin(), keys.end(), key);
  return it != keys.end() && *it == key ? it - keys.begin() : -1;
}

// p(w | h) of interpolated discounting: a(h,w), a(h·), n(h·) and the lower order's p(w | h').
double discounted(double a_hw, double a_h, double n_h, double lower) {
  if (a_h <= 0) return lower;
  return std::max(a_hw - kNgramDiscount, 0.0) / a_h + kNgramDiscount * n_h / a_h * lower;
}

}  // namespace

int64_t predict_ngram_bytes(int64_t train_tokens, int64_t vocab, int64_t window_positions) {
  // at the peak: the trigram keys and their running sums; the bigram keys, raw counts and
  // continuation counts (8 bytes each, at most one per training token); 6 arrays of V (80
  // bytes a token counted); 4 per-target vectors of doubles
  return (Size(train_tokens) * 40 + Size(vocab) * 80 + Size(window_positions) * 32).value();
}

NgramLoss ngram_baselines(const TextStream& train, const Batch& w) {
  const int64_t V = train.vocab;
  if (V >= kNgramMaxVocab)
    throw Error("the trigram baseline packs three token ids into 64 bits: a vocabulary of " + std::to_string(V) +
                " tokens is past " + std::to_string(kNgramMaxVocab - 1));
  const uint64_t uV = static_cast<uint64_t>(V);
  const std::vector<int32_t>& s = train.tokens;
  const auto id = [](int32_t t) { return static_cast<uint64_t>(t); };

  // pass 1: trigrams (u,v,w) at every position of the stream
  std::vector<uint64_t> keys;
  keys.reserve(s.size());
  for (size_t i = 0; i + 2 < s.size(); ++i) keys.push_back((id(s[i]) * uV + id(s[i + 1])) * uV + id(s[i + 2]));
  Counted tri = fold(std::move(keys));
  // running sums of the trigram counts, which then go: c(u,v,w) and c(u,v,·) are differences
  std::vector<int64_t> tri_cum(tri.counts.size() + 1, 0);
  for (size_t i = 0; i < tri.counts.size(); ++i) tri_cum[i + 1] = tri_cum[i] + tri.counts[i];
  std::vector<int64_t>().swap(tri.counts);

  // pass 2: bigrams (v,w), their raw counts and continuation counts N1+(•,v,w)
  keys.clear();
  keys.reserve(s.size());
  for (size_t i = 0; i + 1 < s.size(); ++i) keys.push_back(id(s[i]) * uV + id(s[i + 1]));
  const Counted bi = fold(std::move(keys));
  std::vector<int64_t> bi_kn(bi.keys.size(), 0);
  for (uint64_t k : tri.keys) ++bi_kn[static_cast<size_t>(find(bi.keys, k % (uV * uV)))];

  // per context v: c(v·), n(v·) (Witten–Bell and absolute discounting), Σ_w N1+(•,v,w) and
  // |{w : N1+(•,v,w) > 0}| (Kneser–Ney's middle order); per token w: c(w), N1+(•,w)
  const size_t nV = static_cast<size_t>(V);
  std::vector<int64_t> after(nV, 0), distinct(nV, 0), kn_after(nV, 0), kn_distinct(nV, 0), uni(nV, 0), kn_uni(nV, 0);
  for (size_t i = 0; i < bi.keys.size(); ++i) {
    const size_t v = static_cast<size_t>(bi.keys[i] / uV);
    after[v] += bi.counts[i];
    ++distinct[v];
    kn_after[v] += bi_kn[i];
    if (bi_kn[i] > 0) ++kn_distinct[v];
    ++kn_uni[static_cast<size_t>(bi.keys[i] % uV)];
  }
  for (int32_t t : s) ++uni[static_cast<size_t>(t)];
  int64_t uni_types = 0, kn_uni_types = 0;
  for (size_t v = 0; v < nV; ++v) uni_types += uni[v] > 0, kn_uni_types += kn_uni[v] > 0;
  const double N = static_cast<double>(s.size()), dV = static_cast<double>(V);
  const double kn_uni_total = static_cast<double>(bi.keys.size());  // N1+(•,•): distinct bigrams

  NgramLoss out;
  const size_t BT = static_cast<size_t>(w.batch * w.len);
  for (auto* each : {&out.unigram_each, &out.bigram_each, &out.trigram_ad_each, &out.trigram_kn_each}) each->assign(BT, 0.0);
  double sum[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < w.batch * w.len; ++i) {
    const int32_t target = w.targets[static_cast<size_t>(i)];
    if (target < 0) continue;
    const size_t x = static_cast<size_t>(target), v = static_cast<size_t>(w.tokens[static_cast<size_t>(i)]);
    // unigrams: add-one; discounted raw counts and continuation counts over a uniform 1/V
    const double p_uni = (static_cast<double>(uni[x]) + 1) / (N + dV);
    const double p1_ad = discounted(static_cast<double>(uni[x]), N, static_cast<double>(uni_types), 1 / dV);
    const double p1_kn = discounted(static_cast<double>(kn_uni[x]), kn_uni_total, static_cast<double>(kn_uni_types), 1 / dV);
    // bigrams
    const int64_t b = find(bi.keys, id(static_cast<int32_t>(v)) * uV + id(target));
    const double c_vw = b >= 0 ? static_cast<double>(bi.counts[static_cast<size_t>(b)]) : 0.0;
    const double kn_vw = b >= 0 ? static_cast<double>(bi_kn[static_cast<size_t>(b)]) : 0.0;
    const double c_v = static_cast<double>(after[v]), n_v = static_cast<double>(distinct[v]);
    const double lambda = c_v > 0 ? c_v / (c_v + n_v) : 0.0;
    const double p_wb = (c_v > 0 ? lambda * c_vw / c_v : 0.0) + (1 - lambda) * p_uni;
    const double p2_ad = discounted(c_vw, c_v, n_v, p1_ad);
    double p_ad = p2_ad, p_kn = discounted(c_vw, c_v, n_v, p1_kn);  // a window's first target: bigram on top
    if (i % w.len > 0) {  // trigrams: the window holds the token before v
      const double p2_kn =
          discounted(kn_vw, static_cast<double>(kn_after[v]), static_cast<double>(kn_distinct[v]), p1_kn);
      const uint64_t h = id(w.tokens[static_cast<size_t>(i - 1)]) * uV + id(static_cast<int32_t>(v));
      const size_t lo = std::lower_bound(tri.keys.begin(), tri.keys.end(), h * uV) - tri.keys.begin();
      const size_t hi = std::lower_bound(tri.keys.begin() + static_cast<std::ptrdiff_t>(lo), tri.keys.end(), (h + 1) * uV) -
                        tri.keys.begin();
      const double c_h = static_cast<double>(tri_cum[hi] - tri_cum[lo]), n_h = static_cast<double>(hi - lo);
      const int64_t t = find(tri.keys, h * uV + id(target));
      const double c_hw = t >= 0 ? static_cast<double>(tri_cum[static_cast<size_t>(t) + 1] - tri_cum[static_cast<size_t>(t)]) : 0.0;
      p_ad = discounted(c_hw, c_h, n_h, p2_ad);
      p_kn = discounted(c_hw, c_h, n_h, p2_kn);
    }
    const double p[4] = {p_uni, p_wb, p_ad, p_kn};
    std::vector<double>* each[4] = {&out.unigram_each, &out.bigram_each, &out.trigram_ad_each, &out.trigram_kn_each};
    for (int k = 0; k < 4; ++k) {
      (*each[k])[static_cast<size_t>(i)] = -std::log(p[k]);
      sum[k] -= std::log(p[k]);
    }
    ++out.tokens;
  }
  const double n = out.tokens ? static_cast<double>(out.tokens) : 1.0;
  out.unigram = sum[0] / n;
  out.bigram = sum[1] / n;
  out.trigram_ad = sum[2] / n;
  out.trigram_kn = sum[3] / n;
  return out;
}

}  // namespace attnsim::model
