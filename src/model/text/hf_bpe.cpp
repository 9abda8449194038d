#include "model/text/hf_bpe.h"

#include <optional>
#include <queue>

#include "engine/error.h"
#include "model/text/hf_bytes.h"
#include "model/text/hf_unicode.h"

namespace attnsim::model::hf {

namespace {

// 16 bytes a unit: a piece with no spaces is one piece (invalid UTF-8, a Llama prompt), up to
// 16 MiB of units, so this is most of what encoding it takes.
struct Symbol {
  int32_t id;          // -1 once merged into the symbol on its left
  uint32_t begin;      // its first byte in the piece; it ends where the next symbol begins
  int32_t prev, next;  // -1 at the ends
};

struct Candidate {
  int32_t rank;
  int32_t left;  // the left symbol: symbols are in text order, so the smallest is the leftmost
  int32_t left_id, right_id;  // the pair when it was pushed; stale once either side changed
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
};

// Units -> initial symbols (ids), with byte fallback or unk for units the vocabulary lacks.
std::vector<Symbol> initial_symbols(const BpeModel& m, std::string_view text) {
  std::vector<Symbol> out;
  auto push = [&](int32_t id, size_t b) {
    // a fused unk runs on to the next symbol's first byte, as any symbol does
    if (m.unk && id == *m.unk && m.fuse_unk && !out.empty() && out.back().id == *m.unk) return;
    out.push_back({id, static_cast<uint32_t>(b), -1, -1});
  };
  std::string key;
  for (size_t i = 0; i < text.size();) {
    const size_t len = m.byte_level ? 1 : next_unit(text, i).len;
    key = m.byte_level ? byte_key(static_cast<uint8_t>(text[i])) : std::string(text.substr(i, len));
    if (const auto it = m.vocab.find(key); it != m.vocab.end()) {
      push(it->second, i);
    } else {
      bool all_bytes = m.byte_fallback;
      for (size_t k = 0; all_bytes && k < len; ++k) all_bytes = m.byte_ids[static_cast<uint8_t>(text[i + k])] >= 0;
      if (all_bytes) {
        for (size_t k = 0; k < len; ++k) push(m.byte_ids[static_cast<uint8_t>(text[i + k])], i + k);
      } else if (m.unk) {
        push(*m.unk, i);
      } else {
        throw Error("tokenizer: the vocabulary has no token for the bytes \"" + one_line(key) +
                    "\" and the tokenizer has neither byte fallback nor an unknown token");
      }
    }
    i += len;
  }
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].prev = static_cast<int32_t>(k) - 1;
    out[k].next = k + 1 < out.size() ? static_cast<int32_t>(k) + 1 : -1;
  }
  return out;
}

}  // namespace

void bpe_encode(const BpeModel& m, std::string_view text, std::vector<int32_t>& ids, std::vector<ByteRange>* ranges) {
  if (text.empty()) return;
  if (text.size() > INT32_MAX) throw Error("tokenizer: a piece of " + std::to_string(text.size()) + " bytes is too long");
  if (m.ignore_merges) {
    const std::string whole = [&] {
      if (!m.byte_level) return std::string(text);
      std::string s;
      for (const char c : text) s += byte_key(static_cast<uint8_t>(c));
      return s;
    }();
    if (const auto it = m.vocab.find(whole); it != m.vocab.end()) {
      ids.push_back(it->second);
      if (ranges) ranges->push_back({0, text.size()});
      return;
    }
  }
  std::vector<Symbol> sym = initial_symbols(m, text);
  std::vector<Candidate> first;
  auto candidate = [&](int32_t left) -> std::optional<Candidate> {
    if (left < 0 || sym[left].next < 0) return std::nullopt;
    const Symbol& a = sym[left];
    const Symbol& b = sym[a.next];
    if (const auto it = m.merges.find(BpeModel::pair(a.id, b.id)); it != m.merges.end())
      return Candidate{it->second.rank, left, a.id, b.id};
    return std::nullopt;
  };
  for (size_t k = 0; k + 1 < sym.size(); ++k)
    if (const auto c = candidate(static_cast<int32_t>(k))) first.push_back(*c);
  // Each merge pops its candidate and pushes at most two: never more than two a symbol alive,
  // so the heap is sized once (Tokenizer::predict_encode_bytes counts it so) and heapified in place.
  first.reserve(2 * sym.size());
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap(std::greater<>{}, std::move(first));
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Symbol& a = sym[c.left];
    if (a.id != c.left_id || a.next < 0 || sym[a.next].id != c.right_id) continue;  // stale
    Symbol& b = sym[a.next];
    a.id = m.merges.at(BpeModel::pair(a.id, b.id)).result;
    a.next = b.next;
    b.id = -1;
    if (a.next >= 0) sym[a.next].prev = c.left;
    for (const int32_t left : {a.prev, c.left})
      if (const auto n = candidate(left)) heap.push(*n);
  }
  for (const Symbol& s : sym) {
    if (s.id < 0) continue;
    ids.push_back(s.id);
    if (ranges) ranges->push_back({s.begin, s.next >= 0 ? sym[s.next].begin : text.size()});
  }
}

}  // namespace attnsim::model::hf
