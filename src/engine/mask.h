// Masks for attention: built, combined and deliberately broken in one place.
//
// Convention (PyTorch's masked_fill): a bool mask, true = hidden. The default shape is
// (B, 1, Tq, Tk): one mask per batch element, broadcast over the h heads.
//   causal         query i may not see key j > i (top-left aligned, torch.triu(.., 1))
//   key padding    per-batch key lengths; keys past the length are hidden
//   query padding  per-batch query lengths; a padded query row hides every key,
//                  which leaves a fully hidden row: softmax gives NaN there, as in PyTorch
//   side           right padding (tokens then pads) or left padding (pads then tokens)
// All parts are combined with OR into one mask.
#pragma once

#include <string>
#include <vector>

#include "tensor.h"

namespace attnsim {

enum class PadSide { Right, Left };

struct MaskSpec {
  bool causal = false;
  std::vector<int64_t> key_lengths;    // one per batch element; empty = no key padding
  std::vector<int64_t> query_lengths;  // one per batch element; empty = no query padding
  PadSide side = PadSide::Right;

  bool empty() const { return !causal && key_lengths.empty() && query_lengths.empty(); }
};

// Parses "causal,key-padding=5:3,query-padding=4:4,side=left" (any order; "none" or ""
// for no mask). Lengths are per batch element separated by ':'. Throws Error naming the
// bad part.
MaskSpec parse_mask_spec(const std::string& text);
std::string format_mask_spec(const MaskSpec& spec);
extern const char* const kMaskSpecHelp;

// The combined bool mask (B, 1, Tq, Tk), or an undefined Tensor when spec is empty.
// Throws Error when a length list does not have B entries or a length is out of range.
Tensor build_mask(const MaskSpec& spec, int64_t batch, int64_t tq, int64_t tk);

// The parts on their own (for the two-fills bug and the app's explanation).
Tensor build_causal_mask(int64_t batch, int64_t tq, int64_t tk);
Tensor build_padding_mask(const MaskSpec& spec, int64_t batch, int64_t tq, int64_t tk);

// Elementwise a OR b with broadcasting; result is a new bool tensor.    // copies
Tensor mask_or(const Tensor& a, const Tensor& b);
// Elementwise NOT (the "inverted direction" bug: true marks visible).   // copies
Tensor mask_not(const Tensor& m);

}  // namespace attnsim
