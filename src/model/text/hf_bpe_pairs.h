// The working state of BPE training (hf_bpe_train.h): the symbols of every distinct word in
// one array, linked left to right, and for each adjacent pair of symbols its count (summed
// over the words' frequencies) and the positions that hold it, as a linked list through the
// positions. A merge visits only the positions of its pair and updates the pairs beside each
// one, so its cost is the occurrences it rewrites, never the length of the words they sit in.
// (Issue 49: rewriting and recounting every touched word whole at each merge made 256 KB of
// invalid UTF-8, which GPT-2's split leaves as one word, take minutes and 700 MB.)
//
// Memory is a fixed number of bytes per symbol and per pair (predict_pair_index_bytes), so
// training refuses a corpus that would not fit before it builds anything.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnsim::model::hf {

// A distinct word of the corpus: its bytes and how many times it occurs.
using WordCount = std::pair<std::string_view, int64_t>;

struct PairCount {
  uint64_t pair;  // BpeModel::pair(left, right)
  int64_t count;
};

class PairIndex {
 public:
  // Every word starts as its bytes: symbols 0..255.
  explicit PairIndex(const std::vector<WordCount>& words);

  // The pair with the highest count, the smallest (left, right) on ties; count 0 when no pair is left.
  PairCount best();
  // Rewrites every occurrence of `pair` as `merged` (a new id), left to right within each word
  // as bpe_encode applies a merge ("aaa" with (a, a) is "(aa)a").
  void merge(uint64_t pair, int32_t merged);

 private:
  struct Pair {
    int64_t count = 0;
    int32_t head = -1;  // the first position of its list
  };
  void add(int32_t pos, uint64_t pair, int64_t weight);   // pos now starts `pair`
  void drop(int32_t pos, uint64_t pair, int64_t weight);  // pos no longer starts `pair`
  void push(uint64_t pair, int64_t count);
  void rebuild_heap();

  // per position: its symbol (-1 once merged into its left neighbour), its neighbours in its
  // word (-1 at the ends), its word, and its neighbours in the list of the pair it starts
  std::vector<int32_t> sym_, prev_, next_, word_, list_prev_, list_next_;
  std::vector<int64_t> weight_;  // word -> its count in the corpus
  std::unordered_map<uint64_t, Pair> pairs_;  // only pairs that occur (count > 0)
  std::vector<PairCount> heap_;  // may hold stale counts: best() corrects them as they surface
  std::vector<uint64_t> created_;  // pairs a merge made, pushed once it is done
  std::vector<int32_t> visit_;     // a merge's positions, in order
  int32_t merging_ = -1;           // the token the merge under way makes
};

// The bytes PairIndex and one merge's scratch take for `symbols` bytes in `words` distinct
// words, at most `pairs` distinct pairs alive at once. Checked arithmetic: Error on overflow.
int64_t predict_pair_index_bytes(int64_t symbols, int64_t words, int64_t pairs);

}  // namespace attnsim::model::hf
