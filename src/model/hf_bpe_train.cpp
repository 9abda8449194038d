#include "hf_bpe_train.h"

#include <nlohmann/json.hpp>
#include <queue>
#include <unordered_map>

#include "engine/checked.h"
#include "engine/error.h"
#include "hf_bpe.h"
#include "hf_bytes.h"
#include "hf_split.h"

namespace attnsim::model::hf {

namespace {

struct Word {
  std::vector<int32_t> syms;
  int64_t count = 0;
  int64_t touched = -1;  // the last merge rank that rewrote it (a word is rewritten once a merge)
};

uint64_t key(int32_t a, int32_t b) { return BpeModel::pair(a, b); }

// A pair's count when it was pushed; stale when the count has changed since.
struct Entry {
  int64_t count;
  uint64_t pair;
  // the highest count first, then the smallest (left, right)
  bool operator<(const Entry& o) const { return count != o.count ? count < o.count : pair > o.pair; }
};

class PairCounts {
 public:
  void add(const Word& w, int64_t sign, int32_t word_index) {
    for (size_t i = 0; i + 1 < w.syms.size(); ++i) {
      const uint64_t p = key(w.syms[i], w.syms[i + 1]);
      int64_t& c = count_[p];
      c += sign * w.count;
      if (sign > 0) {
        words_[p].push_back(word_index);
        heap_.push({c, p});
      } else if (c > 0) {
        heap_.push({c, p});
      }
    }
  }
  // The pair to merge next, or count 0 when none occurs twice.
  Entry best() {
    while (!heap_.empty()) {
      const Entry e = heap_.top();
      const auto it = count_.find(e.pair);
      if (it != count_.end() && it->second == e.count) return e;
      heap_.pop();  // stale
    }
    return {0, 0};
  }
  std::vector<int32_t> take_words(uint64_t pair) {
    std::vector<int32_t> w = std::move(words_[pair]);
    words_.erase(pair);
    return w;
  }

 private:
  std::unordered_map<uint64_t, int64_t> count_;
  std::unordered_map<uint64_t, std::vector<int32_t>> words_;  // may repeat a word; filtered by Word::touched
  std::priority_queue<Entry> heap_;
};

// Every occurrence of (a, b) in the word, left to right, becomes `merged`.
void apply_merge(std::vector<int32_t>& syms, int32_t a, int32_t b, int32_t merged) {
  size_t out = 0;
  for (size_t i = 0; i < syms.size(); ++i) {
    if (i + 1 < syms.size() && syms[i] == a && syms[i + 1] == b) {
      syms[out++] = merged;
      ++i;
    } else {
      syms[out++] = syms[i];
    }
  }
  syms.resize(out);
}

std::string key_text(const std::string& bytes) {  // bytes -> the vocabulary's GPT-2 characters
  std::string out;
  for (const char c : bytes) out += byte_key(static_cast<uint8_t>(c));
  return out;
}

constexpr const char* kEndOfText = "<|endoftext|>";

}  // namespace

BpeTraining train_bpe(const std::string& text, int64_t merges) {
  check_range(merges, "--merges", 1, kMaxBpeMerges);
  BpeTraining r;
  std::unordered_map<std::string, int64_t> counts;
  for (const ByteRange& w : split_words(text, SplitPattern::Gpt2)) {
    ++counts[text.substr(w.first, w.second - w.first)];
    ++r.words;
  }
  r.distinct_words = static_cast<int64_t>(counts.size());
  std::vector<Word> words;
  words.reserve(counts.size());
  for (const auto& [w, n] : counts) {
    Word word;
    for (const char c : w) word.syms.push_back(static_cast<uint8_t>(c));
    word.count = n;
    words.push_back(std::move(word));
  }
  // a fixed order of the words, whatever the hash map's: the result must not depend on it
  std::sort(words.begin(), words.end(), [](const Word& a, const Word& b) { return a.syms < b.syms; });
  for (int b = 0; b < 256; ++b) r.tokens.emplace_back(1, static_cast<char>(b));
  PairCounts pairs;
  for (size_t i = 0; i < words.size(); ++i) pairs.add(words[i], +1, static_cast<int32_t>(i));
  for (int64_t rank = 0; rank < merges; ++rank) {
    const Entry e = pairs.best();
    if (e.count < 2) break;
    const int32_t a = static_cast<int32_t>(e.pair >> 32), b = static_cast<int32_t>(e.pair & 0xffffffffu);
    const int32_t merged = static_cast<int32_t>(r.tokens.size());
    r.tokens.push_back(r.tokens[a] + r.tokens[b]);
    r.merges.emplace_back(a, b);
    r.counts.push_back(e.count);
    for (const int32_t wi : pairs.take_words(e.pair)) {
      Word& w = words[static_cast<size_t>(wi)];
      if (w.touched == rank) continue;
      w.touched = rank;
      pairs.add(w, -1, wi);
      apply_merge(w.syms, a, b, merged);
      pairs.add(w, +1, wi);
    }
  }
  return r;
}

std::string vocab_json(const BpeTraining& bpe) {
  nlohmann::ordered_json v = nlohmann::ordered_json::object();
  for (size_t id = 0; id < bpe.tokens.size(); ++id) v[key_text(bpe.tokens[id])] = id;
  v[kEndOfText] = bpe.tokens.size();
  return v.dump();
}

std::string merges_txt(const BpeTraining& bpe) {
  std::string out = "#version: 0.2\n";
  for (const auto& [a, b] : bpe.merges) out += key_text(bpe.tokens[a]) + " " + key_text(bpe.tokens[b]) + "\n";
  return out;
}

std::string tokenizer_json(const BpeTraining& bpe) {
  using J = nlohmann::ordered_json;
  const J byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  J merges = J::array();
  for (const auto& [a, b] : bpe.merges) merges.push_back(key_text(bpe.tokens[a]) + " " + key_text(bpe.tokens[b]));
  J model = {{"type", "BPE"},
             {"dropout", nullptr},
             {"unk_token", nullptr},
             {"continuing_subword_prefix", ""},
             {"end_of_word_suffix", ""},
             {"fuse_unk", false},
             {"byte_fallback", false},
             {"vocab", J::parse(vocab_json(bpe))},
             {"merges", merges}};
  J j = {{"version", "1.0"},
         {"truncation", nullptr},
         {"padding", nullptr},
         {"added_tokens",
          J::array({{{"id", bpe.tokens.size()}, {"content", kEndOfText}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", true}, {"special", true}}})},
         {"normalizer", nullptr},
         {"pre_tokenizer", byte_level},
         {"post_processor", byte_level},
         {"decoder", byte_level},
         {"model", model}};
  return j.dump(1) + "\n";
}

}  // namespace attnsim::model::hf
