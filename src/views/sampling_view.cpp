// Live sampling over cached logits. See sampling_view.h.
#include "views/sampling_view.h"

#include <algorithm>
#include <chrono>
#include <numeric>

namespace attnsim::app {

void SamplingView::set_logits(Tensor last_logits) {
  logits_ = std::move(last_logits);
  // A model with a smaller vocabulary than the last one's top-k keeps every token instead.
  if (options_.top_k > logits_.size(2)) options_.top_k = 0;
  recompute();
}

void SamplingView::set_options(const model::SamplingOptions& options) {
  if (ready()) model::validate_sampling(options, logits_.size(2));  // throws: the old options stay
  options_ = options;
  if (ready()) recompute();
}

void SamplingView::recompute() {
  const auto t0 = std::chrono::steady_clock::now();
  trace_ = model::sampling_trace(logits_, options_);
  compute_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ++revision_;
}

SamplingChart SamplingView::chart(int64_t shown, int32_t marked) const {
  SamplingChart c;
  c.options = options_;
  if (!ready()) return c;
  const int64_t V = logits_.size(2);
  c.vocab = V;
  const float* probs = trace_.at("probs").out.f32();  // (1,1,V)
  const Step& top_p = trace_.at("top_p");
  const float* kept = top_p.skipped() ? nullptr : top_p.out.f32();  // (1,V); greedy: none
  c.next = static_cast<int32_t>(trace_.at("next_token").out.f32()[0]);
  auto is_kept = [&](int64_t id) { return kept ? kept[id] > 0 : id == c.next; };
  for (int64_t id = 0; id < V; ++id)
    if (is_kept(id)) {
      ++c.kept_count;
      c.kept_mass += probs[id];
    }

  std::vector<int32_t> ids(static_cast<size_t>(V));
  std::iota(ids.begin(), ids.end(), 0);
  const auto n = static_cast<size_t>(std::clamp<int64_t>(shown, 1, V));
  // most likely first, ties by the lowest id (sampling.h's order)
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(),
                    [&](int32_t a, int32_t b) { return probs[a] != probs[b] ? probs[a] > probs[b] : a < b; });
  ids.resize(n);
  if (std::find(ids.begin(), ids.end(), c.next) == ids.end()) ids.push_back(c.next);
  if (marked >= 0 && marked < V && std::find(ids.begin(), ids.end(), marked) == ids.end()) ids.push_back(marked);
  for (int32_t id : ids) {
    SamplingBar b;
    b.token = id;
    b.prob = probs[id];
    b.kept = is_kept(id);
    b.chosen = id == c.next;
    b.marked = id == marked;
    c.bars.push_back(b);
  }
  return c;
}

}  // namespace attnsim::app
