// The text stages before BPE: a normalizer rewrites a piece of the input, pre-tokenizers cut
// it into words. A Piece carries, for every byte of its (rewritten) text, the bytes of the
// original input it came from, so each token maps back to a Span of the user's text:
//   "Hi you" --Replace " "->"▁"--> "Hi▁you": the 3 bytes of "▁" all come from byte 2 (the space)
//   --Prepend "▁"--> "▁Hi▁you": the new "▁" comes from the empty range at byte 0.
// Text no step has rewritten keeps no per-byte map: its byte i is the input's byte base + i.
// (GPT-2's and Llama 3's tokenizers never rewrite, and 16 bytes of map a byte, copied into
// every word, was most of the 600 MB that 10 MB of text took to encode; issue 49.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/text/hf_split.h"

namespace attnsim::model::hf {

// The text after normalization, summed over its pieces: millions of tokens, far past any
// model's context. A byte a step rewrote also carries 16 bytes of span bookkeeping
// (Piece::from / to): kPieceBytesPerByte. Tokenizer::predict_encode_bytes bounds the rest.
inline constexpr int64_t kMaxNormalizedBytes = int64_t{16} << 20;
inline constexpr int64_t kPieceBytesPerByte = 1 + 2 * static_cast<int64_t>(sizeof(size_t));

struct Span {
  size_t begin, end;  // byte range of one token in the input text; empty for an inserted "▁"
};

// The stages tokenizer.json names (hf_tokenizer.h reads them):
struct NormalizeStep {
  enum Kind { Prepend, Replace, Nfc } kind;
  std::string text;     // Prepend: what; Replace: the pattern
  std::string content;  // Replace: the replacement
};

struct PreTokenizeStep {
  enum Kind { ByteLevel, Split, Digits, Metaspace } kind;
  SplitPattern pattern = SplitPattern::Gpt2;  // ByteLevel (when use_regex) and Split
  bool use_regex = true;           // ByteLevel
  bool add_prefix_space = false;   // ByteLevel
  bool individual_digits = false;  // Digits
  std::string replacement;         // Metaspace: "▁"
  enum Prepend { Always, First, Never } prepend = Always;  // Metaspace
  bool split = true;               // Metaspace: each replacement starts a new piece
};

struct Piece {
  std::string text;
  // per byte of text: the original bytes [from, to) it stands for; empty while `mapped` is false
  std::vector<size_t> from, to;
  bool mapped = false;
  size_t base = 0;  // unmapped: text[i] is the input's byte base + i

  static Piece of(const std::string& input, size_t begin, size_t end);
  Piece sub(size_t begin, size_t end) const;
  Span span(size_t begin, size_t end) const;  // original bytes of text[begin, end)
  void map_bytes();  // fills from and to (before a step rewrites the text)
};

// The bytes of rewritten text over one encode, all pieces together, checked before each
// rewrite allocates: a Replace chain that doubles the text, or a long Prepend, is refused with
// its figures instead of taking the machine's memory.
struct NormalizeBudget {
  size_t input;       // bytes of the caller's text
  size_t total = input;
  // Throws Error when `grow` more bytes would pass kMaxNormalizedBytes; `what` names the stage.
  void add(size_t grow, const std::string& what);
  // Before a piece of `len` bytes is normalized: Error when the chain could make it pass the
  // limit (normalized_bound). A doubling chain is refused by its figures, before any of it is
  // built.
  void check_bound(size_t len, const std::vector<NormalizeStep>& steps) const;
};

// The most bytes the normalizer can make of `len` bytes: each Replace as if its pattern matched
// at every position, each Prepend once.
double normalized_bound(size_t len, const std::vector<NormalizeStep>& steps);
// Throws Error for text NFC would change (attnsim checks NFC, it does not compute it).
void normalize(Piece& piece, const std::vector<NormalizeStep>& steps, NormalizeBudget& budget);
// Calls emit with each word of the piece, in order, as it is cut: one word at a time is alive,
// not a copy of the text cut into all of them. `first`: the piece starts the input
// (Metaspace's prepend_scheme "first").
void pre_tokenize(Piece piece, const std::vector<PreTokenizeStep>& steps, bool first, NormalizeBudget& budget,
                  const std::function<void(const Piece&)>& emit);

}  // namespace attnsim::model::hf
