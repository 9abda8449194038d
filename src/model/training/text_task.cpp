#include "model/training/text_task.h"

#include <algorithm>
#include <cmath>

#include "engine/error.h"
#include "engine/random.h"
#include "model/formats/checkpoint.h"
#include "model/text/hf_tokenizer.h"

namespace attnsim::model {

namespace {

// Line starts from which a window of T tokens stays inside the stream.
int64_t usable_starts(const TextStream& s, int64_t T) {
  const auto end = std::upper_bound(s.starts.begin(), s.starts.end(), static_cast<int64_t>(s.tokens.size()) - T);
  return end - s.starts.begin();
}

void fill_window(Batch& out, int64_t b, const TextStream& s, int64_t from) {
  const int64_t T = out.len;
  for (int64_t t = 0; t < T; ++t) {
    out.tokens[b * T + t] = s.tokens[from + t];
    out.targets[b * T + t] = t + 1 < T ? s.tokens[from + t + 1] : -1;
    out.part[b * T + t] = kOther;
  }
}

Batch empty(int64_t B, int64_t T) {
  Batch out;
  out.batch = B;
  out.len = T;
  out.tokens.assign(static_cast<size_t>(B * T), 0);
  out.targets.assign(static_cast<size_t>(B * T), -1);
  out.part.assign(static_cast<size_t>(B * T), kOther);
  return out;
}

}  // namespace

std::string heldout_sample_path() { return shipped_models_dir() + "/../corpus/wordnet-heldout-sample.txt"; }

TextStream tokenize_lines(const hf::Tokenizer& tokenizer, const std::string& text) {
  const std::optional<int32_t> eos = tokenizer.token_id("<|endoftext|>");
  if (!eos) throw Error("the tokenizer has no <|endoftext|> token to separate the corpus's lines");
  TextStream s;
  s.eos = *eos;
  s.vocab = tokenizer.vocab_size();
  for (size_t at = 0; at < text.size();) {
    const size_t nl = std::min(text.find('\n', at), text.size());
    if (nl > at) {
      s.starts.push_back(static_cast<int64_t>(s.tokens.size()));
      s.tokens.push_back(s.eos);
      const std::vector<int32_t> ids = tokenizer.encode(text.substr(at, nl - at));
      s.tokens.insert(s.tokens.end(), ids.begin(), ids.end());
    }
    at = nl + 1;
  }
  if (s.starts.empty()) throw Error("the corpus has no lines");
  return s;
}

void text_row(Batch& out, int64_t b, const TextStream& s, uint64_t seed, uint64_t index) {
  const int64_t n = usable_starts(s, out.len);
  if (n == 0)
    throw Error("the corpus holds " + std::to_string(s.tokens.size()) + " tokens, fewer than one window of " +
                std::to_string(out.len));
  const uint64_t draw = random_bits(seed, 0x7E470000u + static_cast<uint64_t>(b), index);
  fill_window(out, b, s, s.starts[static_cast<size_t>(draw % static_cast<uint64_t>(n))]);
}

void text_repeat_row(Batch& out, int64_t b, const TextStream& s, int64_t min_repeat, int64_t max_repeat, uint64_t seed,
                     uint64_t index) {
  text_row(out, b, s, seed, index);  // the window; its tokens [1, 1+k) are x
  const int64_t T = out.len;
  const uint64_t span = static_cast<uint64_t>(max_repeat - min_repeat + 1);
  const int64_t k = min_repeat + static_cast<int64_t>(random_bits(seed, 0x7E480000u + static_cast<uint64_t>(b), index) % span);
  int32_t* row = out.tokens.data() + b * T;
  // the window w = EOS x y... becomes EOS x x y...: row[t] = w[t − k] from t = k + 1 on
  const std::vector<int32_t> w(row, row + T);
  for (int64_t t = 1 + k; t < T; ++t) row[t] = w[static_cast<size_t>(t - k)];
  for (int64_t t = 0; t < T; ++t) {  // position t predicts token t + 1
    out.targets[b * T + t] = t + 1 < T ? row[t + 1] : -1;
    out.part[b * T + t] = t + 1 <= k ? kFirst : t + 1 == k + 1 ? kRepeatStart : t + 1 <= 2 * k ? kRepeat : kOther;
  }
}

Batch text_windows(const TextStream& s, int64_t T, int64_t count) {
  std::vector<int64_t> from;
  const int64_t n = usable_starts(s, T);
  for (int64_t i = 0; i < n && static_cast<int64_t>(from.size()) < count;) {
    from.push_back(s.starts[static_cast<size_t>(i)]);
    i = std::lower_bound(s.starts.begin(), s.starts.begin() + n, from.back() + T) - s.starts.begin();
  }
  if (from.empty()) throw Error("the held-out text is shorter than one window of " + std::to_string(T) + " tokens");
  Batch out = empty(static_cast<int64_t>(from.size()), T);
  for (size_t b = 0; b < from.size(); ++b) fill_window(out, static_cast<int64_t>(b), s, from[b]);
  return out;
}

Batch repeated_text(const TextStream& s, int64_t repeat, int64_t count) {
  std::vector<int64_t> from;
  for (size_t i = 0; i < s.starts.size() && static_cast<int64_t>(from.size()) < count; ++i) {
    const int64_t end = i + 1 < s.starts.size() ? s.starts[i + 1] : static_cast<int64_t>(s.tokens.size());
    if (end - s.starts[i] - 1 >= repeat) from.push_back(s.starts[i] + 1);
  }
  if (from.empty()) throw Error("no held-out line is " + std::to_string(repeat) + " tokens long");
  const int64_t T = 2 * repeat + 1;
  Batch out = empty(static_cast<int64_t>(from.size()), T);
  for (size_t b = 0; b < from.size(); ++b) {
    std::vector<int32_t> row{s.eos};
    for (int copy = 0; copy < 2; ++copy) row.insert(row.end(), s.tokens.begin() + from[b], s.tokens.begin() + from[b] + repeat);
    for (int64_t t = 0; t < T; ++t) {
      out.tokens[b * T + t] = row[t];
      out.targets[b * T + t] = t + 1 < T ? row[t + 1] : -1;
      out.part[b * T + t] = t + 1 < T ? uint8_t{t + 1 <= repeat ? kFirst : t + 1 == repeat + 1 ? kRepeatStart : kRepeat}
                                      : uint8_t{kOther};
    }
  }
  return out;
}

IclPositions icl_positions(int64_t T) { return {T / 12, T / 6, 3 * T / 4}; }

TextEval evaluate_text(const Model& model, const Batch& w, std::vector<double>* each) {
  const int64_t T = w.len, V = model.config.vocab, chunk = 16;
  const auto [early_from, early_to, late_from] = icl_positions(T);
  if (each) each->assign(static_cast<size_t>(w.batch * T), 0.0);
  double sum = 0, early = 0, late = 0;
  int64_t n = 0, n_early = 0, n_late = 0;
  for (int64_t b0 = 0; b0 < w.batch; b0 += chunk) {  // 16 windows at a time: logits (16,T,V)
    const int64_t B = std::min(chunk, w.batch - b0);
    Batch part = empty(B, T);
    std::copy_n(w.tokens.begin() + b0 * T, B * T, part.tokens.begin());
    std::copy_n(w.targets.begin() + b0 * T, B * T, part.targets.begin());
    const Tensor logits = forward_finite(model, part).logits;
    const float* L = logits.f32();  // contiguous (B,T,V)
    for (int64_t i = 0; i < B * T; ++i) {
      const int32_t target = part.targets[i];
      if (target < 0) continue;
      const float* row = L + i * V;
      const float mx = *std::max_element(row, row + V);
      double z = 0;
      for (int64_t v = 0; v < V; ++v) z += std::exp(static_cast<double>(row[v] - mx));
      const double loss = std::log(z) - static_cast<double>(row[target] - mx);
      const int64_t t = i % T;
      if (each) (*each)[static_cast<size_t>(b0 * T + i)] = loss;
      sum += loss, ++n;
      if (t >= early_from && t < early_to) early += loss, ++n_early;
      if (t >= late_from) late += loss, ++n_late;
    }
  }
  TextEval e;
  e.tokens = n;
  e.loss = n ? sum / n : 0;
  e.early = n_early ? early / n_early : 0;
  e.late = n_late ? late / n_late : 0;
  e.icl = e.late - e.early;
  return e;
}

}  // namespace attnsim::model
