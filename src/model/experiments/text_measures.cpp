// Held-out measures with their standard errors. See text_measures.h.
#include "model/experiments/text_measures.h"

#include <algorithm>
#include <cmath>

#include "engine/checked.h"
#include "engine/error.h"
#include "model/experiments/ngram.h"
#include "model/formats/checkpoint.h"
#include "model/training/heads.h"

namespace attnsim::model {

namespace {

constexpr int64_t kLinesAtOnce = 32;  // the training log's repeated batch: 32 lines

// −ln softmax(row)[target], in double, as evaluate_text computes it.
double target_loss(const float* row, int64_t V, int32_t target) {
  const float mx = *std::max_element(row, row + V);
  double z = 0;
  for (int64_t v = 0; v < V; ++v) z += std::exp(static_cast<double>(row[v] - mx));
  return std::log(z) - static_cast<double>(row[target] - mx);
}

// Rows [from, from + count) of `all`, the first `len` positions of each (targets past the
// last position dropped).
Batch rows_of(const Batch& all, int64_t from, int64_t count, int64_t len) {
  Batch out;
  out.batch = count;
  out.len = len;
  for (int64_t b = from; b < from + count; ++b)
    for (int64_t t = 0; t < len; ++t) {
      const size_t i = static_cast<size_t>(b * all.len + t);
      out.tokens.push_back(all.tokens[i]);
      out.targets.push_back(t + 1 < len ? all.targets[i] : -1);
      out.part.push_back(t + 1 < len ? all.part[i] : uint8_t{kOther});
    }
  return out;
}

// Mean loss of positions [from, to) of row b of logits (B,T,V), their targets from `batch`.
double mean_loss(const Tensor& logits, const Batch& batch, int64_t b, int64_t from, int64_t to) {
  const int64_t T = batch.len, V = logits.size(2);
  double sum = 0;
  for (int64_t t = from; t < to; ++t)
    sum += target_loss(logits.f32() + (b * T + t) * V, V, batch.targets[static_cast<size_t>(b * T + t)]);
  return sum / static_cast<double>(to - from);
}

}  // namespace

BlockMean block_mean(const std::vector<double>& x) {
  BlockMean m;
  m.blocks = static_cast<int64_t>(x.size());
  if (x.empty()) return m;
  double sum = 0;
  for (double v : x) sum += v;
  m.mean = sum / static_cast<double>(x.size());
  if (x.size() < 2) return m;
  double sq = 0;
  for (double v : x) sq += (v - m.mean) * (v - m.mean);
  m.se = std::sqrt(sq / static_cast<double>(x.size() - 1) / static_cast<double>(x.size()));
  return m;
}

BlockMean paired_difference(const Batch& w, const std::vector<double>& a, const std::vector<double>& b) {
  const int64_t T = w.len;
  if (a.size() != static_cast<size_t>(w.batch * T) || b.size() != a.size())
    throw Error("paired_difference: the losses are not laid out as the windows' targets");
  std::vector<double> per_window;
  for (int64_t r = 0; r < w.batch; ++r) {
    double sum = 0;
    int64_t n = 0;
    for (int64_t t = 0; t < T; ++t) {
      const size_t i = static_cast<size_t>(r * T + t);
      if (w.targets[i] < 0) continue;
      sum += a[i] - b[i], ++n;
    }
    if (n > 0) per_window.push_back(sum / static_cast<double>(n));
  }
  return block_mean(per_window);
}

BlockMean icl_over_windows(const Batch& w, const std::vector<double>& loss) {
  const int64_t T = w.len;
  if (loss.size() != static_cast<size_t>(w.batch * T))
    throw Error("icl_over_windows: the losses are not laid out as the windows' targets");
  const IclPositions p = icl_positions(T);
  std::vector<double> per_window;
  for (int64_t r = 0; r < w.batch; ++r) {
    double early = 0, late = 0;
    int64_t n_early = 0, n_late = 0;
    for (int64_t t = 0; t < T; ++t) {
      const size_t i = static_cast<size_t>(r * T + t);
      if (w.targets[i] < 0) continue;
      if (t >= p.early_from && t < p.early_to) early += loss[i], ++n_early;
      if (t >= p.late_from) late += loss[i], ++n_late;
    }
    if (n_early > 0 && n_late > 0)
      per_window.push_back(late / static_cast<double>(n_late) - early / static_cast<double>(n_early));
  }
  return block_mean(per_window);
}

RepeatedLines evaluate_repeated_lines(const Model& model, const TextStream& heldout, int64_t R) {
  const ModelConfig& c = model.config;
  const Batch all = repeated_text(heldout, R, INT64_MAX);  // (L, 2R+1): EOS r r
  const int64_t T = all.len, H = c.heads, cells = c.layers * c.heads;
  RepeatedLines out;
  out.repeat = R;
  out.lines = all.batch;
  std::vector<RowSum> sums(static_cast<size_t>(cells)), first(static_cast<size_t>(cells));
  std::vector<RowSum> copy(static_cast<size_t>(cells)), copy_first(static_cast<size_t>(cells));
  std::vector<double> with_first, alone, drop;  // per line
  for (int64_t b0 = 0; b0 < all.batch; b0 += kLinesAtOnce) {
    const int64_t B = std::min(kLinesAtOnce, all.batch - b0);
    const Batch rep = rows_of(all, b0, B, T);            // EOS r r
    const Batch solo = rows_of(all, b0, B, R + 1);       // EOS r
    const Activations acts = forward_finite(model, rep);
    std::vector<float> one(static_cast<size_t>(B * T * T));  // (B,T,T): one head's alpha
    for (int64_t l = 0; l < c.layers; ++l) {
      const Tensor& alpha = acts.layers[static_cast<size_t>(l)].attn.at("alpha").out;  // (B,h,T,T) contiguous
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t b = 0; b < B; ++b) std::copy_n(alpha.f32() + (b * H + h) * T * T, T * T, one.data() + b * T * T);
        const RowSum s = induction_rows(one.data(), rep.tokens.data(), B, T, R + 1);  // the second copy's rows
        RowSum& into = sums[static_cast<size_t>(l * H + h)];
        into.sum += s.sum, into.rows += s.rows;
        const RowSum o = copy_rows(one.data(), B, R);
        RowSum& own = copy[static_cast<size_t>(l * H + h)];
        own.sum += o.sum, own.rows += o.rows;
      }
    }
    if (b0 == 0) first = sums, copy_first = copy;
    if (R < 2) continue;  // r[1..R−1] is empty: no behavioural test
    // the second copy's r[1..R−1], predicted at positions R+1 .. 2R−1; alone at 1 .. R−1
    const Tensor solo_logits = forward_finite(model, solo).logits;  // (B,R+1,V)
    for (int64_t b = 0; b < B; ++b) {
      const double w = mean_loss(acts.logits, rep, b, R + 1, 2 * R), a = mean_loss(solo_logits, solo, b, 1, R);
      with_first.push_back(w), alone.push_back(a), drop.push_back(w - a);
    }
  }
  for (size_t k = 0; k < sums.size(); ++k) {
    out.second_copy.push_back(sums[k].mean());
    out.second_copy_log.push_back(first[k].mean());
    out.copy_only.push_back(copy[k].mean());
    out.copy_only_log.push_back(copy_first[k].mean());
  }
  out.with_first = block_mean(with_first).mean;
  out.alone = block_mean(alone).mean;
  out.drop = block_mean(drop);
  return out;
}

int64_t predict_text_report_bytes(const ModelConfig& c, int64_t train_tokens, int64_t heldout_tokens) {
  const int64_t R = std::min<int64_t>(32, (c.seq_len - 1) / 2);
  // the windows (tokens, targets, part: 9 bytes a position) with the model's per-target losses
  // (8), and the repeated lines (9 a position; a line of R tokens or more gives 2R + 1 ≤ 3R
  // positions of at least R held-out tokens)
  const Size batches = Size(heldout_tokens) * (9 + 8) + Size(heldout_tokens) * 3 * 9;
  const int64_t forward = std::max(predict_forward_bytes(c, 16, c.seq_len), predict_forward_bytes(c, kLinesAtOnce, 2 * R + 1) * 2);
  return (Size(checkpoint_bytes(c)) + predict_ngram_bytes(train_tokens, c.vocab, heldout_tokens) + batches + forward).value();
}

}  // namespace attnsim::model
