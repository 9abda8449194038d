#include "hf_bench.h"

#include <algorithm>
#include <chrono>

#include "engine/checked.h"
#include "engine/error.h"
#include "engine/random.h"
#include "hf_eval.h"
#include "hf_forward.h"

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

}  // namespace attnsim::model::hf
