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

// Throws Error for text NFC would change (attnsim checks NFC, it does not compute it).
void normalize(Piece& piece, const std::vector<NormalizeStep>& steps);
// `first`: the piece starts the input (Metaspace's prepend_scheme "first").
std::vector<Piece> pre_tokenize(Piece piece, const std::vector<PreTokenizeStep>& steps, bool first);

}  // namespace attnsim::model::hf
