#include "model/text/hf_bpe_train.h"

#include <nlohmann/json.hpp>

#include "engine/checked.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "model/text/hf_bpe.h"
#include "model/text/hf_bpe_pairs.h"
#include "model/text/hf_bpe_words.h"
#include "model/text/hf_bytes.h"

namespace attnsim::model::hf {

namespace {

std::string key_text(const std::string& bytes) {  // bytes -> the vocabulary's GPT-2 characters
  std::string out;
  for (const char c : bytes) out += byte_key(static_cast<uint8_t>(c));
  return out;
}

constexpr const char* kEndOfText = "<|endoftext|>";

// A byte as tokenizer.json spells it: its GPT-2 character (1 or 2 bytes of UTF-8), '"' and
// '\\' escaped.
int64_t json_text_bytes(uint8_t b) { return static_cast<int64_t>(byte_key(b).size()) + (b == '"' || b == '\\'); }
// What one token adds to tokenizer.json as tokenizer_json writes it (one space of indent a
// level): `   "TEXT": ID,` in the vocabulary and `   "LEFT RIGHT",` in the merges, whose two
// sides spell the token's bytes again. A byte token has no merge: counted as if it had one.
int64_t json_entry_bytes(int64_t text_bytes, size_t id) {
  return 2 * text_bytes + static_cast<int64_t>(std::to_string(id).size()) + 17;
}
// Everything else tokenizer.json holds (<|endoftext|> twice, the pre-tokenizer, the decoder, the
// model's fields) is under this.
constexpr int64_t kJsonFixedBytes = 2048;

// The result: per token a std::string, its merge, its count and its spelled size, in vectors
// that may have doubled, and the tokens' bytes, which tokenizer.json spells twice each (the
// vocabulary and the merge), so the check on its size keeps them under half of it.
constexpr int64_t kBytesPerToken = 2 * (32 + 8 + 8 + 8);
constexpr int64_t kTokenTextBytes = kMaxTokenizerBytes / 2;

}  // namespace

BpeTraining train_bpe(const std::string& text, int64_t merges, int64_t mem_limit) {
  check_range(merges, "--merges", 1, kMaxBpeMerges);
  const auto size = static_cast<int64_t>(text.size());
  if (size > kMaxNormalizedBytes)
    throw Error("the corpus is " + human_bytes(size) + "; attnsim learns a tokenizer from at most " +
                human_bytes(kMaxNormalizedBytes) + ", the most its tokenizers encode at once");
  const std::string what = "learning " + format_count(merges) + " merges from " + human_bytes(size) + " of text";
  const auto fits = [&](Size bytes) { check_fits(bytes.value(), mem_limit, what, "learn from a smaller corpus"); };
  // Each stage's memory from what the stage before it found, checked before it allocates:
  // cutting the text into words, the words sorted, then the pairs and the tokens.
  const Size split = predict_split_bytes(text);
  fits(Size(size) + split);
  const int64_t all_words = count_all_words(text);
  const Size sorted = predict_count_words_bytes(all_words);
  fits(Size(size) + split + sorted);
  CorpusWords words = count_words(text, all_words);
  BpeTraining r;
  r.words = words.words;
  r.distinct_words = static_cast<int64_t>(words.distinct.size());
  // Live pairs: at most one per pair of neighbours, and at most one per pair of tokens. A
  // token spans one word at most.
  const int64_t vocab = 256 + merges;
  const int64_t pairs = std::min(words.bytes - r.distinct_words, vocab * vocab);
  const int64_t token_text = std::min(kTokenTextBytes, checked_add(256, checked_mul(merges, words.longest)));
  fits(Size(size) + sorted + Size(r.distinct_words) * static_cast<int64_t>(sizeof(WordCount)) +
       predict_pair_index_bytes(words.bytes, r.distinct_words, pairs) + Size(vocab) * kBytesPerToken + token_text);
  PairIndex index(words.distinct);
  words = {};  // the index has the words now
  std::vector<int64_t> spelled;  // id -> the bytes of its text in tokenizer.json
  int64_t json = kJsonFixedBytes;
  for (int b = 0; b < 256; ++b) {
    r.tokens.emplace_back(1, static_cast<char>(b));
    spelled.push_back(json_text_bytes(static_cast<uint8_t>(b)));
    json += json_entry_bytes(spelled.back(), r.tokens.size() - 1);
  }
  for (int64_t rank = 0; rank < merges; ++rank) {
    const PairCount best = index.best();
    if (best.count < 2) break;
    const auto a = static_cast<int32_t>(best.pair >> 32), b = static_cast<int32_t>(best.pair & 0xffffffffu);
    // Checked before the token is built: a corpus of one character repeated learns tokens that
    // double in length at each merge (16 MiB of "a": 23 merges make an 8 MiB token).
    spelled.push_back(spelled[a] + spelled[b]);
    if ((json += json_entry_bytes(spelled.back(), r.tokens.size())) > kMaxTokenizerBytes)
      throw Error(what + ": after " + format_count(rank) + " merges the next token is " +
                  format_count(static_cast<int64_t>(r.tokens[a].size() + r.tokens[b].size())) +
                  " bytes long, and tokenizer.json would pass the " + human_bytes(kMaxTokenizerBytes) +
                  " attnsim reads; learn at most " + format_count(rank) + " merges, or from a corpus with fewer repeats");
    const auto merged = static_cast<int32_t>(r.tokens.size());
    r.tokens.push_back(r.tokens[a] + r.tokens[b]);
    r.merges.emplace_back(a, b);
    r.counts.push_back(best.count);
    index.merge(best.pair, merged);
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
