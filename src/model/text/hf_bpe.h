// The BPE model of a Hugging Face tokenizer: a vocabulary of strings, merges by rank, and what
// to do with a piece of text the vocabulary lacks (byte fallback to <0xNN> tokens, or an unk).
//
// One piece (a pre-tokenizer's word) becomes units first: each byte (byte-level BPE, keyed by
// its GPT-2 character) or each UTF-8 code unit. Then the adjacent pair with the lowest merge
// rank is merged, leftmost first on ties, until no pair has a merge: a heap over the pairs of
// a linked list, O(n log n) in the piece's length (a Llama prompt with no spaces is one piece).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/text/hf_split.h"

namespace attnsim::model::hf {

struct Merge {
  int32_t rank;    // its line in the merges list: lower merges first
  int32_t result;  // the id of the merged token
};

struct BpeModel {
  std::unordered_map<std::string, int32_t> vocab;
  std::vector<std::string> tokens;  // id -> string; empty where no token has that id
  std::unordered_map<uint64_t, Merge> merges;  // (left id << 32 | right id)
  bool byte_level = false;     // units are bytes, keyed by byte_key (hf_bytes.h)
  bool byte_fallback = false;  // a unit the vocabulary lacks becomes its bytes' <0xNN> tokens
  std::array<int32_t, 256> byte_ids{};  // <0xNN> token ids, -1 where absent
  std::optional<int32_t> unk;  // else a unit with no token is an Error
  bool fuse_unk = false;       // consecutive unks become one
  bool ignore_merges = false;  // a piece that is itself a token is that token (Llama 3)

  static uint64_t pair(int32_t a, int32_t b) { return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b); }
};

// Appends the tokens of one piece and, when ranges is given, their byte ranges inside it.
void bpe_encode(const BpeModel& model, std::string_view text, std::vector<int32_t>& ids, std::vector<ByteRange>* ranges);

}  // namespace attnsim::model::hf
