// Learning a byte-level BPE from a corpus (issue 36), in GPT-2's form, so that the tokens a
// learner sees come from the same tokenizer code as a real GPT-2's (hf_tokenizer.h):
//
//   1. the text is cut into words by GPT-2's split pattern (hf_split.h), and words are counted;
//   2. every word starts as its bytes (256 base tokens, one per byte, as GPT-2 has);
//   3. N times: the adjacent pair with the highest count over all words becomes a new token
//      (ties: the pair whose left, then right, token id is smallest), and every occurrence of
//      it is merged, left to right, as bpe_encode applies a merge.
//
// The cost is bounded by the corpus and predicted before the work (issue 49): the corpus is
// at most kMaxNormalizedBytes, the tokenizer's own limit, so the tokenizer learned can encode
// the text it learned from (a 30 MB line used to train for a minute, write the folder, and
// then be refused when bpe-train encoded it); each distinct word is stored once with its
// count; a merge rewrites only the occurrences of its pair (hf_bpe_pairs.h), so a corpus that
// is one long "word" (invalid UTF-8, one character repeated) costs what any other corpus of
// its size does; and each stage's memory is predicted before it allocates, against --mem-limit.
// The result encodes exactly as GPT-2's BPE does with the same files (merge rank order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/text/hf_tokenizer.h"

namespace attnsim::model::hf {

struct BpeTraining {
  std::vector<std::string> tokens;                 // id -> bytes: 0..255 the bytes, then one per merge
  std::vector<std::pair<int32_t, int32_t>> merges;  // rank -> (left id, right id); token 256 + rank
  std::vector<int64_t> counts;                     // rank -> the pair's count when it was merged
  int64_t words = 0, distinct_words = 0;           // in the corpus
};

inline constexpr int64_t kMaxBpeMerges = 100'000;
// Throws Error for merges outside 1..kMaxBpeMerges, a text over kMaxNormalizedBytes, a
// predicted memory over mem_limit (0: 75 % of memory, as every command), and a vocabulary that
// would make tokenizer.json larger than kMaxTokenizerBytes (the most load_tokenizer reads).
// Stops early (fewer merges) when no pair occurs twice: merging a pair seen once learns
// nothing that generalises.
BpeTraining train_bpe(const std::string& text, int64_t merges, int64_t mem_limit = 0);

// The learned tokenizer as Hugging Face writes GPT-2's: tokenizer.json (BPE model, ByteLevel
// pre-tokenizer with GPT-2's split, ByteLevel decoder, "<|endoftext|>" added as the last id),
// and the same vocabulary as vocab.json + merges.txt for loaders that read those.
std::string tokenizer_json(const BpeTraining& bpe);
std::string vocab_json(const BpeTraining& bpe);
std::string merges_txt(const BpeTraining& bpe);

}  // namespace attnsim::model::hf
