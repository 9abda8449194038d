// Learning a byte-level BPE from a corpus (issue 36), in GPT-2's form, so that the tokens a
// learner sees come from the same tokenizer code as a real GPT-2's (hf_tokenizer.h):
//
//   1. the text is cut into words by GPT-2's split pattern (hf_split.h), and words are counted;
//   2. every word starts as its bytes (256 base tokens, one per byte, as GPT-2 has);
//   3. N times: the adjacent pair with the highest count over all words becomes a new token
//      (ties: the pair whose left, then right, token id is smallest), and every occurrence of
//      it is merged, left to right, as bpe_encode applies a merge.
//
// Pair counts are kept up to date incrementally: a merge touches only the words that hold the
// pair, so a corpus of 10 MB (80,000 distinct words) learns thousands of merges in seconds.
// The result encodes exactly as GPT-2's BPE does with the same files (merge rank order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnsim::model::hf {

struct BpeTraining {
  std::vector<std::string> tokens;                 // id -> bytes: 0..255 the bytes, then one per merge
  std::vector<std::pair<int32_t, int32_t>> merges;  // rank -> (left id, right id); token 256 + rank
  std::vector<int64_t> counts;                     // rank -> the pair's count when it was merged
  int64_t words = 0, distinct_words = 0;           // in the corpus
};

inline constexpr int64_t kMaxBpeMerges = 100'000;

// Throws Error for merges outside 1..kMaxBpeMerges. Stops early (fewer merges) when no pair
// occurs twice: merging a pair seen once learns nothing that generalises.
BpeTraining train_bpe(const std::string& text, int64_t merges);

// The learned tokenizer as Hugging Face writes GPT-2's: tokenizer.json (BPE model, ByteLevel
// pre-tokenizer with GPT-2's split, ByteLevel decoder, "<|endoftext|>" added as the last id),
// and the same vocabulary as vocab.json + merges.txt for loaders that read those.
std::string tokenizer_json(const BpeTraining& bpe);
std::string vocab_json(const BpeTraining& bpe);
std::string merges_txt(const BpeTraining& bpe);

}  // namespace attnsim::model::hf
