#include "model/experiments/hf_eval.h"

#include <algorithm>
#include <cmath>

#include "model/experiments/ablate.h"
#include "engine/error.h"
#include "engine/random.h"
#include "model/pass/sampling.h"

namespace attnsim::model::hf {

// [SECTION] predictions

std::vector<Prediction> top_k(const std::vector<float>& row, int64_t k) {
  const int64_t V = static_cast<int64_t>(row.size());
  k = std::clamp<int64_t>(k, 0, V);
  const float mx = *std::max_element(row.begin(), row.end());
  double z = 0;
  for (float v : row) z += std::exp(static_cast<double>(v) - mx);
  std::vector<int32_t> ids(static_cast<size_t>(V));
  for (int64_t i = 0; i < V; ++i) ids[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int32_t a, int32_t b) {
    return row[static_cast<size_t>(a)] > row[static_cast<size_t>(b)] || (row[static_cast<size_t>(a)] == row[static_cast<size_t>(b)] && a < b);
  });
  std::vector<Prediction> out;
  for (int64_t i = 0; i < k; ++i) {
    const float v = row[static_cast<size_t>(ids[static_cast<size_t>(i)])];
    out.push_back({ids[static_cast<size_t>(i)], std::exp(static_cast<double>(v) - mx) / z, v});
  }
  return out;
}

std::vector<Prediction> top_k(const Tensor& logits, int64_t row, int64_t k) {
  const int64_t V = logits.size(1);
  const float* p = logits.f32() + row * V;  // (T,V) contiguous
  return top_k(std::vector<float>(p, p + V), k);
}

double next_token_loss(const Tensor& logits, const std::vector<int32_t>& tokens) {
  const int64_t T = static_cast<int64_t>(tokens.size()), V = logits.size(1);
  if (T < 2) throw Error("the next-token loss needs at least 2 tokens (one to predict)");
  double sum = 0;
  for (int64_t p = 0; p + 1 < T; ++p) {
    const float* r = logits.f32() + p * V;
    const double mx = *std::max_element(r, r + V);
    double z = 0;
    for (int64_t i = 0; i < V; ++i) z += std::exp(r[i] - mx);
    sum += std::log(z) + mx - r[tokens[static_cast<size_t>(p + 1)]];
  }
  return sum / static_cast<double>(T - 1);
}

int32_t choose_next_token(const std::vector<float>& logits, double temperature, uint64_t seed, int64_t step) {
  return sample_row(logits.data(), static_cast<int64_t>(logits.size()), {temperature, 0, 1.0, seed, step}).next;
}

// [SECTION] head roles

HeadTable score_hf_heads(const std::vector<HfForward>& runs, const std::vector<std::vector<int32_t>>& seqs,
                         int64_t heads) {
  const int64_t B = static_cast<int64_t>(runs.size()), T = static_cast<int64_t>(seqs.front().size());
  std::vector<int32_t> tokens;  // (B,T)
  for (const auto& s : seqs) tokens.insert(tokens.end(), s.begin(), s.end());
  HeadTable table;
  table.layers = static_cast<int64_t>(runs.front().alpha.size());
  table.heads = heads;
  std::vector<float> one(static_cast<size_t>(B * T * T));  // one head's patterns (B,T,T)
  for (int64_t l = 0; l < table.layers; ++l)
    for (int64_t hh = 0; hh < heads; ++hh) {
      for (int64_t b = 0; b < B; ++b)  // alpha (1,h,T,T), contiguous: head hh at hh·T·T
        std::copy_n(runs[static_cast<size_t>(b)].alpha[static_cast<size_t>(l)].f32() + hh * T * T, T * T,
                    one.data() + b * T * T);
      table.cells.push_back(score_pattern(one.data(), tokens.data(), B, T));
    }
  return table;
}

HeadTable score_hf_heads_repeated(const HfModel& m, int64_t len, int64_t sequences, uint64_t seed) {
  std::vector<HfForward> runs;
  std::vector<std::vector<int32_t>> seqs;
  HfForwardOptions o;
  o.keep_layer = m.config.layers;  // no layer's whole trace: alpha is all the scores read
  for (int64_t s = 0; s < sequences; ++s) {
    seqs.push_back(repeated_random_tokens(m.config, len, seed + static_cast<uint64_t>(s)));
    runs.push_back(hf_forward(m, seqs.back(), o));
    runs.back().ctx.clear();
  }
  return score_hf_heads(runs, seqs, m.config.heads);
}

std::vector<int32_t> repeated_random_tokens(const HfConfig& c, int64_t len, uint64_t seed) {
  const int64_t room = (c.max_positions - (c.bos >= 0 ? 1 : 0)) / 2;
  len = std::min(len, room);
  if (len < 1) throw Error("the model's " + std::to_string(c.max_positions) + " positions hold no repeated sequence");
  std::vector<int32_t> r;
  for (int64_t i = 0; i < len; ++i)
    r.push_back(static_cast<int32_t>(random_bits(seed, static_cast<uint64_t>(Stream::Token), static_cast<uint64_t>(i)) %
                                     static_cast<uint64_t>(c.vocab)));
  std::vector<int32_t> out;
  if (c.bos >= 0) out.push_back(static_cast<int32_t>(c.bos));
  out.insert(out.end(), r.begin(), r.end());
  out.insert(out.end(), r.begin(), r.end());
  return out;
}

// [SECTION] ablation

std::vector<HeadRef> parse_hf_heads(const std::string& text, const HfConfig& c) {
  ModelConfig shape;  // parse_heads reads only the layer and head counts
  shape.layers = c.layers;
  shape.heads = c.heads;
  return parse_heads(text, shape);
}

std::vector<std::vector<HeadPatch>> head_patches(const HfConfig& c, const std::vector<HeadRef>& heads,
                                                 const HfForward* base) {
  std::vector<std::vector<HeadPatch>> out(static_cast<size_t>(c.layers));
  const int64_t dk = c.head_dim();
  for (const HeadRef& r : heads) {
    HeadPatch p{r.head, {}};
    if (base) {  // the head's ctx (1,h,T,dk) averaged over positions
      const Tensor& ctx = base->ctx[static_cast<size_t>(r.layer)];
      const int64_t T = ctx.size(2);
      p.value.assign(static_cast<size_t>(dk), 0.0f);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t e = 0; e < dk; ++e) p.value[static_cast<size_t>(e)] += ctx.f32()[(r.head * T + t) * dk + e] / static_cast<float>(T);
    }
    out[static_cast<size_t>(r.layer)].push_back(std::move(p));
  }
  return out;
}

std::vector<HeadAblation> ablate_hf_heads(const HfModel& m, const std::vector<int32_t>& tokens,
                                          const std::vector<HeadRef>& heads, bool mean, double* base_loss) {
  const HfConfig& c = m.config;
  HfForwardOptions plain;
  plain.keep_layer = 0;  // alpha and ctx of every layer, one whole trace
  const HfForward base = hf_forward(m, tokens, plain);
  const double loss0 = next_token_loss(base.logits, tokens);
  if (base_loss) *base_loss = loss0;
  auto run = [&](const std::vector<HeadRef>& set) {
    HfForwardOptions o;
    o.keep_layer = 0;
    o.patches = head_patches(c, set, mean ? &base : nullptr);
    const double loss = next_token_loss(hf_forward(m, tokens, o).logits, tokens);
    return HeadAblation{set, loss, loss - loss0};
  };
  std::vector<HeadAblation> out;
  if (!heads.empty()) {
    out.push_back(run(heads));
    return out;
  }
  for (int64_t l = 0; l < c.layers; ++l)
    for (int64_t h = 0; h < c.heads; ++h) out.push_back(run({HeadRef{l, h}}));
  return out;
}

}  // namespace attnsim::model::hf
