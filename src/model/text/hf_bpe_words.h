// The words BPE training learns from (hf_bpe_train.h): the corpus cut by GPT-2's split pattern
// (hf_split.h), each distinct word once with its count.
//
// split_words keeps up to 40 bytes of bookkeeping a byte of what it is given, so the corpus goes
// to it in chunks cut where GPT-2's split is sure to cut whatever surrounds them: the words
// are those of the whole text, and the bookkeeping is that of the longest chunk, not of the
// corpus. Ordinary text has such a cut every few bytes; a corpus with none (one character
// repeated, invalid UTF-8) is one chunk, and the prediction says so.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/text/hf_bpe_pairs.h"

namespace attnsim::model::hf {

struct CorpusWords {
  std::vector<WordCount> distinct;  // views into the text, in byte order
  int64_t words = 0;                // all of them, repeats included
  int64_t bytes = 0;                // of the distinct words together
  int64_t longest = 0;              // bytes of the longest word
};

// What split_words takes on the text's longest chunk, from a scan that allocates nothing.
int64_t predict_split_bytes(std::string_view text);
// The number of words (repeats included), from a split that keeps nothing: what count_words
// keeps while it counts them is proportional to it (predict_count_words_bytes).
int64_t count_all_words(std::string_view text);
int64_t predict_count_words_bytes(int64_t all_words);
// `all_words` from count_all_words.
CorpusWords count_words(std::string_view text, int64_t all_words);

}  // namespace attnsim::model::hf
