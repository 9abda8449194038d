// The text stages before BPE: a normalizer rewrites a piece of the input, pre-tokenizers cut
// it into words. A Piece carries, for every byte of its (rewritten) text, the bytes of the
// original input it came from, so each token maps back to a Span of the user's text:
//   "Hi you" --Replace " "->"▁"--> "Hi▁you": the 3 bytes of "▁" all come from byte 2 (the space)
//   --Prepend "▁"--> "▁Hi▁you": the new "▁" comes from the empty range at byte 0.
#pragma once

#include <string>
#include <vector>

#include "hf_tokenizer.h"

namespace attnsim::model::hf {

struct Piece {
  std::string text;
  std::vector<size_t> from, to;  // per byte of text: the original bytes [from, to) it stands for

  static Piece of(const std::string& input, size_t begin, size_t end);
  Piece sub(size_t begin, size_t end) const;
  Span span(size_t begin, size_t end) const;  // original bytes of text[begin, end)
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
  // limit, counting each Replace as if its pattern matched at every position and each
  // Prepend once. A doubling chain is refused by its figures, before any of it is built.
  void check_bound(size_t len, const std::vector<NormalizeStep>& steps) const;
};

// Throws Error for text NFC would change (attnsim checks NFC, it does not compute it).
void normalize(Piece& piece, const std::vector<NormalizeStep>& steps, NormalizeBudget& budget);
// `first`: the piece starts the input (Metaspace's prepend_scheme "first").
std::vector<Piece> pre_tokenize(Piece piece, const std::vector<PreTokenizeStep>& steps, bool first,
                                NormalizeBudget& budget);

}  // namespace attnsim::model::hf
