#include "model/text/hf_bpe_words.h"

#include <algorithm>

#include "engine/checked.h"
#include "engine/error.h"
#include "model/text/hf_split.h"

namespace attnsim::model::hf {

namespace {

// A chunk ends at the first sure cut this many bytes on: split_words is called a few hundred
// times on a corpus of megabytes, and keeps a few MB of bookkeeping at a time.
constexpr size_t kChunkBytes = size_t{64} << 10;

// An ASCII byte that is neither whitespace nor part of another character: a unit of its own,
// not whitespace, wherever it stands.
bool solid(char c) { return c > ' ' && c < 0x7F; }

// Where the chunk that starts at `start` ends: the first sure cut kChunkBytes on, or the end.
//   "x\ny"  after the newline: between two non-spaces it is a word of its own (\s+ takes it
//           alone, and no pattern that starts at x or y takes whitespace)
//   "x y"   before the space: " y" starts a word (" ?\p{L}+" and its kin), x's word ends there
// split_words decides each word from what follows it, so the words before a cut are the same
// whether or not the text goes on: the one pattern that looks past its word, \s+(?!\S), sees
// the newline then "y" in the whole text, the newline then the end in the chunk, and takes
// the newline alone in both.
size_t chunk_end(std::string_view text, size_t start) {
  for (size_t i = start + kChunkBytes; i + 1 < text.size(); ++i) {
    if (!solid(text[i - 1]) || !solid(text[i + 1])) continue;
    if (text[i] == '\n') return i + 1;
    if (text[i] == ' ') return i;
  }
  return text.size();
}

// split_words holds an 8-byte unit a byte (reserved once) and a 16-byte range a word, in a
// vector that may have doubled.
constexpr int64_t kSplitBytesPerByte = 8 + 2 * 16;

struct Word {  // a word of the text (the text is at most kMaxNormalizedBytes, under 4 GiB)
  uint32_t begin, size;
};

// Calls f(begin, end) for every word of the text, in order, a chunk at a time.
template <class F>
void for_each_word(std::string_view text, F f) {
  for (size_t start = 0; start < text.size();) {
    const size_t end = chunk_end(text, start);
    for (const auto& [b, e] : split_words(text.substr(start, end - start), SplitPattern::Gpt2)) f(start + b, start + e);
    start = end;
  }
}

}  // namespace

int64_t predict_split_bytes(std::string_view text) {
  size_t longest = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = chunk_end(text, start);
    longest = std::max(longest, end - start);
    start = end;
  }
  return checked_mul(static_cast<int64_t>(longest), kSplitBytesPerByte);
}

int64_t count_all_words(std::string_view text) {
  int64_t n = 0;
  for_each_word(text, [&](size_t, size_t) { ++n; });
  return n;
}

int64_t predict_count_words_bytes(int64_t all_words) {
  return checked_mul(all_words, static_cast<int64_t>(sizeof(Word)));
}

CorpusWords count_words(std::string_view text, int64_t all_words) {
  if (uint64_t{text.size()} > UINT32_MAX) throw Error("count_words: the text is larger than 4 GiB");
  // Sorted rather than hashed: 8 bytes a word, known before the words are found, where a hash
  // table takes 64 bytes a distinct word, which only the counting tells.
  std::vector<Word> all;
  all.reserve(static_cast<size_t>(all_words));
  for_each_word(text, [&](size_t b, size_t e) { all.push_back({static_cast<uint32_t>(b), static_cast<uint32_t>(e - b)}); });
  const auto view = [&](const Word& w) { return text.substr(w.begin, w.size); };
  std::sort(all.begin(), all.end(), [&](const Word& x, const Word& y) { return view(x) < view(y); });
  CorpusWords out;
  out.words = static_cast<int64_t>(all.size());
  size_t distinct = 0;
  for (size_t i = 0; i < all.size(); ++i) distinct += i == 0 || view(all[i]) != view(all[i - 1]);
  out.distinct.reserve(distinct);
  for (const Word& w : all) {
    if (!out.distinct.empty() && out.distinct.back().first == view(w)) {
      ++out.distinct.back().second;
      continue;
    }
    out.distinct.emplace_back(view(w), 1);
    out.bytes += w.size;
    out.longest = std::max<int64_t>(out.longest, w.size);
  }
  return out;
}

}  // namespace attnsim::model::hf
