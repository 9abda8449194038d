// Real tokenizers of Hugging Face model folders: GPT-2's byte-level BPE and the Llama-family
// BPE with byte fallback, as tokenizer.json (or GPT-2's vocab.json + merges.txt) describes them.
//
// encode runs the pipeline tokenizer.json names, in its order:
//   added tokens   split out first (leftmost, longest), each its own id
//   normalizer     Prepend "▁", Replace " " -> "▁" (Llama 2, SentencePiece style), NFC (Qwen2)
//   pre-tokenizer  ByteLevel (GPT-2's split + bytes as characters), Split by the GPT-2, Llama 3
//                  or Qwen2 pattern, Digits, Metaspace
//   model          BPE by merge rank (hf_bpe.h)
// and keeps, for every token, the bytes of the input it came from (Span), so a view can draw
// token boundaries over the user's own text. Anything else tokenizer.json may name is refused
// at load with one Error naming it. encode never adds BOS: a caller that runs a Llama-family
// model puts bos_id() first.
//
// Byte for byte: decode(encode(text)) == text for any bytes (Korean, emoji, invalid UTF-8)
// wherever the tokenizer itself keeps everything: GPT-2, Llama 3, Qwen2 and Llama 2's
// tokenizer.json (its prepended "▁" is the space its decoder strips); text that contains an
// added token's string, or starts with a space under Metaspace, comes back as the model sees it.
// Where Hugging Face's ByteLevel and ByteFallback decoders put U+FFFD for bytes that are not
// UTF-8, decode returns the bytes themselves: that is what makes the round trip exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/text/hf_bpe.h"
#include "model/text/hf_pipeline.h"

namespace attnsim::model::hf {

// What token_label draws for invisible bytes: glyphs NanumGothic (the app's font) has.
inline constexpr const char* kSpaceMark = "\u00B7";    // ·
inline constexpr const char* kNewlineMark = "\u21B2";  // ↲
inline constexpr const char* kTabMark = "\u2192";      // →

struct AddedToken {
  int32_t id;
  std::string content;
  bool special;
};

// How ids become bytes again (tokenizer.json's decoder).
struct DecodeRule {
  bool byte_level = false;    // GPT-2 characters -> bytes
  std::string metaspace;      // this string -> " " (Llama: "▁"); empty for none
  bool byte_fallback = false; // <0xNN> -> the byte
  size_t strip_leading = 0;   // spaces removed from the front of the whole text
};

// Everything a Tokenizer runs on; load_tokenizer fills it from the files.
struct TokenizerSpec {
  std::string source;  // the file(s), for messages
  std::string kind;    // a one-line description, e.g. "byte-level BPE (GPT-2 split), 50257 tokens"
  BpeModel model;
  std::vector<NormalizeStep> normalizer;
  std::vector<PreTokenizeStep> pre_tokenizer;
  std::vector<AddedToken> added;
  DecodeRule decoder;
  std::optional<int32_t> bos;
};

// The added tokens as a byte trie: finding the longest one that starts at a position costs at
// most kMaxAddedTokenBytes lookups, however many added tokens there are (comparing each one at
// each position made 150,000 added tokens over 120,000 characters take minutes).
class AddedTrie {
 public:
  void insert(const std::string& content, int32_t added_index);
  // The index (into TokenizerSpec::added) of the longest added token starting at text[at], or -1.
  int32_t longest_at(const std::string& text, size_t at) const;

 private:
  static uint64_t edge(uint32_t node, uint8_t byte) { return uint64_t{node} << 8 | byte; }
  std::unordered_map<uint64_t, uint32_t> child_;  // edge(node, byte) -> node; the root is 0
  std::vector<int32_t> token_;                     // node -> added index ending here, or -1
};

class Tokenizer {
 public:
  explicit Tokenizer(TokenizerSpec spec);

  std::vector<int32_t> encode(const std::string& text) const;
  // The most memory encode() takes on a text of `bytes` bytes (the text not counted), from the
  // pipeline's steps alone: a caller checks it before it reads or encodes (issue 49).
  int64_t predict_encode_bytes(int64_t bytes) const;
  // The tokens of `text` (into *ids when given) and, for each, the bytes of `text` it covers.
  // Spans are in order and do not overlap; byte-level tokens may split a multi-byte character.
  std::vector<Span> encode_spans(const std::string& text, std::vector<int32_t>* ids) const;
  // Throws Error naming the first id that is not a token.
  std::string decode(const std::vector<int32_t>& ids) const;
  // One token for display: UTF-8 where valid, else <0xNN> per byte; space, newline and tab
  // shown as kSpaceMark, kNewlineMark, kTabMark; added tokens as written. Throws Error for an
  // id that is not a token.
  std::string token_label(int32_t id) const;
  int64_t vocab_size() const;  // the largest id + 1
  bool is_token(int32_t id) const;  // a vocabulary or added token (ids below vocab_size may be holes)
  std::optional<int32_t> bos_id() const;
  std::optional<int32_t> token_id(const std::string& token) const;  // vocabulary or added token
  bool is_special(int32_t id) const;
  const std::string& kind() const { return spec_.kind; }

 private:
  void check_id(int32_t id) const;
  void encode_into(const std::string& text, std::vector<int32_t>& ids, std::vector<Span>* spans) const;
  std::string token_bytes(int32_t id) const;  // the bytes one token stands for, before decoder stripping

  TokenizerSpec spec_;
  std::vector<int32_t> added_by_id_;  // id -> index into spec_.added, -1 for none
  AddedTrie added_trie_;
};

// DIR/tokenizer.json, else DIR/vocab.json + DIR/merges.txt (GPT-2). Throws Error naming the
// file and what is wrong: too large (over kMaxTokenizerBytes, refused before reading), not
// JSON, nested too deep, a model or normalizer attnsim does not run, merges of unknown tokens.
Tokenizer load_tokenizer(const std::string& dir);
Tokenizer load_tokenizer_json(const std::string& path);
Tokenizer load_gpt2_files(const std::string& vocab_json, const std::string& merges_txt);
// Parsing alone, for tests and the fuzzer: `what` names the text in messages.
Tokenizer parse_tokenizer_json(const std::string& text, const std::string& what);

// Llama 3's tokenizer.json is 9 MB, Gemma's 17 MB: 32 MiB leaves room and refuses a 50 MB file.
inline constexpr int64_t kMaxTokenizerBytes = int64_t{32} << 20;

// Bounds on the work a tokenizer file can ask for (real ones are far inside them: Llama 3's
// longest added token is 31 bytes, its normalizer and pre-tokenizer 1 to 3 steps, every
// rewrite string 1 to 3 bytes).
inline constexpr size_t kMaxPipelineSteps = 64;       // normalizer steps, and pre-tokenizer steps
inline constexpr size_t kMaxRewriteBytes = 256;       // a Prepend, Replace or Metaspace string
inline constexpr size_t kMaxAddedTokenBytes = 256;    // one added token
inline constexpr size_t kMaxAddedBytes = 4u << 20;    // all added tokens together

// A text file to encode whole (tokenize --file, bpe-train's corpus, which it encodes to report
// the tokenizer it learned): refused by its size, before it is read, when it is larger than
// kMaxNormalizedBytes, so that every command has the one limit the tokenizer has.
std::string read_text_to_encode(const std::string& path);

}  // namespace attnsim::model::hf
