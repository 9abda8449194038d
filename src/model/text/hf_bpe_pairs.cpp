#include "model/text/hf_bpe_pairs.h"

#include <algorithm>

#include "engine/checked.h"
#include "model/text/hf_bpe.h"

namespace attnsim::model::hf {

namespace {

// Heap order: the highest count on top, then the smallest (left, right).
bool lower(const PairCount& x, const PairCount& y) { return x.count != y.count ? x.count < y.count : x.pair > y.pair; }

// Pairs whose count is below 2 are never merged (training stops there), so they stay out of the heap.
constexpr int64_t kMergeable = 2;
// Stale heap entries allowed beyond two per live pair before the heap is rebuilt from the
// counts: keeps the heap in proportion to the pairs without rebuilding it at every merge.
constexpr size_t kHeapSlack = 65536;

// Measured with libstdc++: an unordered_map node of a uint64_t key and a 16-byte value is a
// 48-byte allocation, its bucket array up to two pointers per entry; the heap holds up to two
// entries per pair plus kHeapSlack, in a vector that may have doubled; created_ one pair id.
constexpr int64_t kBytesPerPair = 48 + 16 + 4 * 16 + 2 * 8;
constexpr int64_t kHeapSlackBytes = 2 * static_cast<int64_t>(kHeapSlack) * 16;
// per symbol: six int32 arrays, and visit_ (one int32 each, in a vector that may have doubled)
constexpr int64_t kBytesPerSymbol = 6 * 4 + 2 * 4;
constexpr int64_t kBytesPerWord = 8;

}  // namespace

int64_t predict_pair_index_bytes(int64_t symbols, int64_t words, int64_t pairs) {
  return (Size(symbols) * kBytesPerSymbol + Size(words) * kBytesPerWord + Size(pairs) * kBytesPerPair + kHeapSlackBytes)
      .value();
}

PairIndex::PairIndex(const std::vector<WordCount>& words) {
  size_t symbols = 0;
  for (const WordCount& w : words) symbols += w.first.size();
  for (auto* v : {&sym_, &prev_, &next_, &word_, &list_prev_, &list_next_}) v->reserve(symbols);
  weight_.reserve(words.size());
  for (const auto& [text, count] : words) {
    const auto word = static_cast<int32_t>(weight_.size());
    weight_.push_back(count);
    const auto first = static_cast<int32_t>(sym_.size());
    for (size_t i = 0; i < text.size(); ++i) {
      const auto pos = static_cast<int32_t>(sym_.size());
      sym_.push_back(static_cast<uint8_t>(text[i]));
      prev_.push_back(i == 0 ? -1 : pos - 1);
      next_.push_back(i + 1 == text.size() ? -1 : pos + 1);
      word_.push_back(word);
      list_prev_.push_back(-1);
      list_next_.push_back(-1);
    }
    for (int32_t pos = first; pos + 1 < static_cast<int32_t>(sym_.size()); ++pos)
      add(pos, BpeModel::pair(sym_[pos], sym_[pos + 1]), count);
  }
  created_.clear();
  rebuild_heap();
}

void PairIndex::add(int32_t pos, uint64_t pair, int64_t weight) {
  const auto [it, fresh] = pairs_.try_emplace(pair);
  if (fresh) created_.push_back(pair);
  Pair& p = it->second;
  p.count += weight;
  list_prev_[pos] = -1;
  list_next_[pos] = p.head;
  if (p.head >= 0) list_prev_[p.head] = pos;
  p.head = pos;
}

void PairIndex::drop(int32_t pos, uint64_t pair, int64_t weight) {
  const auto it = pairs_.find(pair);
  Pair& p = it->second;
  p.count -= weight;
  const int32_t before = list_prev_[pos], after = list_next_[pos];
  if (before >= 0) list_next_[before] = after;
  else p.head = after;
  if (after >= 0) list_prev_[after] = before;
  // No position holds it any more. A pair of the new token may be made again later in the
  // same merge ("abab" -> X a -> X X): merge() removes those once it is done, so that
  // created_ lists each new pair once.
  const bool made_now = static_cast<int32_t>(pair >> 32) == merging_ || static_cast<int32_t>(pair & 0xffffffffu) == merging_;
  if (p.count == 0 && !made_now) pairs_.erase(it);
}

void PairIndex::push(uint64_t pair, int64_t count) {
  heap_.push_back({pair, count});
  std::push_heap(heap_.begin(), heap_.end(), lower);
}

void PairIndex::rebuild_heap() {
  std::vector<PairCount> heap;
  for (const auto& [pair, p] : pairs_)
    if (p.count >= kMergeable) heap.push_back({pair, p.count});
  std::make_heap(heap.begin(), heap.end(), lower);
  heap_.swap(heap);
}

PairCount PairIndex::best() {
  while (!heap_.empty()) {
    const PairCount top = heap_.front();
    const auto it = pairs_.find(top.pair);
    const int64_t now = it == pairs_.end() ? 0 : it->second.count;
    if (now == top.count) return top;
    // A pair's count only grows during the merge that made it (every new pair holds the new
    // token), and it is pushed after that merge: a stale entry is always too high.
    std::pop_heap(heap_.begin(), heap_.end(), lower);
    heap_.pop_back();
    if (now >= kMergeable) push(top.pair, now);
  }
  return {0, 0};
}

void PairIndex::merge(uint64_t pair, int32_t merged) {
  const auto a = static_cast<int32_t>(pair >> 32), b = static_cast<int32_t>(pair & 0xffffffffu);
  merging_ = merged;
  visit_.clear();
  if (const auto it = pairs_.find(pair); it != pairs_.end())
    for (int32_t pos = it->second.head; pos >= 0; pos = list_next_[pos]) visit_.push_back(pos);
  // Left to right within a word (positions grow along a word): with a == b the leftmost
  // occurrence of "aaa" merges and the one it overlaps is skipped below.
  std::sort(visit_.begin(), visit_.end());
  for (const int32_t p : visit_) {
    const int32_t q = next_[p];
    if (sym_[p] != a || q < 0 || sym_[q] != b) continue;  // taken by the occurrence on its left
    const int64_t w = weight_[word_[p]];
    const int32_t o = prev_[p], r = next_[q];
    drop(p, pair, w);
    if (o >= 0) drop(o, BpeModel::pair(sym_[o], a), w);
    if (r >= 0) drop(q, BpeModel::pair(b, sym_[r]), w);
    sym_[p] = merged;
    sym_[q] = -1;
    next_[p] = r;
    if (r >= 0) prev_[r] = p;
    if (o >= 0) add(o, BpeModel::pair(sym_[o], merged), w);
    if (r >= 0) add(p, BpeModel::pair(merged, sym_[r]), w);
  }
  for (const uint64_t made : created_) {
    const auto it = pairs_.find(made);
    if (it->second.count == 0) pairs_.erase(it);
    else if (it->second.count >= kMergeable) push(made, it->second.count);
  }
  created_.clear();
  merging_ = -1;
  if (heap_.size() > 2 * pairs_.size() + kHeapSlack) rebuild_heap();
}

}  // namespace attnsim::model::hf
