#include "model/experiments/hf_bench.h"

#include <algorithm>
#include <chrono>

#include "engine/checked.h"
#include "engine/error.h"
#include "engine/random.h"
#include "model/experiments/hf_eval.h"
#include "model/pass/hf_forward.h"

namespace attnsim::model::hf {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

int32_t greedy(const std::vector<float>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

}  // namespace

std::vector<int32_t> bench_token_ids(const HfConfig& c, int64_t length) {
  std::vector<int32_t> tokens;
  for (int64_t i = 0; i < length; ++i)
    tokens.push_back(static_cast<int32_t>(random_bits(1, static_cast<uint64_t>(Stream::Token), static_cast<uint64_t>(i)) %
                                          static_cast<uint64_t>(c.vocab)));
  return tokens;
}

std::vector<double> time_forward(const HfModel& m, const std::vector<int32_t>& tokens, int64_t layer, int repeats,
                                 int64_t* layer_trace_bytes) {
  HfForwardOptions o;
  o.keep_layer = layer;
  (void)hf_forward(m, tokens, o);  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    const HfForward r = hf_forward(m, tokens, o);
    ms.push_back(ms_since(start));
    if (layer_trace_bytes) *layer_trace_bytes = r.traces[static_cast<size_t>(layer)].held_bytes();
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

std::vector<double> time_decode(const HfModel& m, const std::vector<int32_t>& prompt, int64_t steps) {
  const int64_t t_max = checked_add(static_cast<int64_t>(prompt.size()), steps, "prompt + steps");
  if (t_max > m.config.max_positions)
    throw Error("prompt + steps = " + std::to_string(t_max) + " tokens is longer than the model's " +
                std::to_string(m.config.max_positions) + " positions");
  HfDecoder dec(m, t_max);
  std::vector<Trace> traces;
  int32_t next = greedy(dec.feed(prompt, &traces));
  std::vector<double> ms;
  for (int64_t s = 1; s < steps; ++s) {
    const auto start = Clock::now();
    traces.clear();
    next = greedy(dec.feed({next}, &traces));
    ms.push_back(ms_since(start));
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

int64_t predict_decode_bytes(const HfConfig& c, int64_t prompt, int64_t steps) {
  const int64_t t_max = checked_add(prompt, steps, "prompt + steps");
  const int64_t cache = (Size(c.layers) * 2 * c.kv_heads * c.head_dim() * t_max * 4).value();
  return checked_add(cache, predict_hf_forward_bytes(c, prompt, true));
}

HfGemmFloor::HfGemmFloor(const HfModel& m, int64_t rows, int64_t keys) : model_(m) {
  const HfConfig& c = m.config;
  const int64_t h = c.heads, dk = c.head_dim();
  if (m.widened_per_layer()) widened_.push_back(m.layer(0));
  x_ = Tensor::zeros({1, rows, c.d_model});
  hidden_ = Tensor::zeros({1, rows, c.d_ff});
  q_ = Tensor::zeros({1, h, rows, dk});
  k_ = Tensor::zeros({1, h, keys, dk});
  alpha_ = Tensor::zeros({1, h, rows, keys});
}

void HfGemmFloor::run() const {
  Backend& be = cpu_backend();
  const bool gpt2 = model_.config.family == Family::Gpt2;
  for (int64_t l = 0; l < model_.config.layers; ++l) {
    const HfLayer& L = widened_.empty() ? model_.layers[static_cast<size_t>(l)] : widened_.front();
    for (const Linear* w : {&L.attn.W_Q, &L.attn.W_K, &L.attn.W_V}) (void)be.linear(x_, *w);
    (void)be.qk(q_, k_);
    (void)be.av(alpha_, k_);
    (void)be.linear(x_, L.attn.W_O);
    if (gpt2) {
      (void)be.linear(x_, L.fc);
      (void)be.linear(hidden_, L.proj);
    } else {
      (void)be.linear(x_, L.gate);
      (void)be.linear(x_, L.up);
      (void)be.linear(hidden_, L.down);
    }
  }
  (void)be.linear(x_, Linear{model_.unembed, Tensor(), model_.unembed_packed});  // every row, as hf_forward
}

double HfGemmFloor::flops() const {
  const HfConfig& c = model_.config;
  const double rows = static_cast<double>(x_.size(1)), keys = static_cast<double>(k_.size(2));
  const double d = static_cast<double>(c.d_model), ff = static_cast<double>(c.d_ff);
  const double kv = static_cast<double>(c.kv_heads * c.head_dim()), dk = static_cast<double>(c.head_dim());
  const double linears = d * d * 2 + kv * d * 2 + ff * d * (c.family == Family::Gpt2 ? 2 : 3);
  const double per_layer = 2 * rows * linears + 2 * 2 * static_cast<double>(c.heads) * rows * keys * dk;
  return static_cast<double>(c.layers) * per_layer + 2 * rows * static_cast<double>(c.vocab) * d;
}

}  // namespace attnsim::model::hf
