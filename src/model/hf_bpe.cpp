#include "hf_bpe.h"

#include <queue>

#include "engine/error.h"
#include "hf_bytes.h"
#include "hf_unicode.h"

namespace attnsim::model::hf {

namespace {

struct Symbol {
  int32_t id;
  size_t begin, end;  // bytes of the piece
  int prev, next;     // -1 at the ends
  bool alive = true;
};

struct Candidate {
  int32_t rank;
  size_t begin;  // the left symbol's first byte: leftmost wins a tie
  int left;
  int32_t left_id, right_id;  // the pair when it was pushed; stale once either side changed
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : begin > o.begin; }
};

// Units -> initial symbols (ids), with byte fallback or unk for units the vocabulary lacks.
std::vector<Symbol> initial_symbols(const BpeModel& m, std::string_view text) {
  std::vector<Symbol> out;
  auto push = [&](int32_t id, size_t b, size_t e) {
    if (m.unk && id == *m.unk && m.fuse_unk && !out.empty() && out.back().id == *m.unk) {
      out.back().end = e;
      return;
    }
    out.push_back({id, b, e, -1, -1});
  };
  std::string key;
  for (size_t i = 0; i < text.size();) {
    const size_t len = m.byte_level ? 1 : next_unit(text, i).len;
    key = m.byte_level ? byte_key(static_cast<uint8_t>(text[i])) : std::string(text.substr(i, len));
    if (const auto it = m.vocab.find(key); it != m.vocab.end()) {
      push(it->second, i, i + len);
    } else {
      bool all_bytes = m.byte_fallback;
      for (size_t k = 0; all_bytes && k < len; ++k) all_bytes = m.byte_ids[static_cast<uint8_t>(text[i + k])] >= 0;
      if (all_bytes) {
        for (size_t k = 0; k < len; ++k) push(m.byte_ids[static_cast<uint8_t>(text[i + k])], i + k, i + k + 1);
      } else if (m.unk) {
        push(*m.unk, i, i + len);
      } else {
        throw Error("tokenizer: the vocabulary has no token for the bytes \"" + one_line(key) +
                    "\" and the tokenizer has neither byte fallback nor an unknown token");
      }
    }
    i += len;
  }
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].prev = static_cast<int>(k) - 1;
    out[k].next = k + 1 < out.size() ? static_cast<int>(k) + 1 : -1;
  }
  return out;
}

}  // namespace

void bpe_encode(const BpeModel& m, std::string_view text, std::vector<int32_t>& ids, std::vector<ByteRange>& ranges) {
  if (text.empty()) return;
  if (m.ignore_merges) {
    const std::string whole = [&] {
      if (!m.byte_level) return std::string(text);
      std::string s;
      for (const char c : text) s += byte_key(static_cast<uint8_t>(c));
      return s;
    }();
    if (const auto it = m.vocab.find(whole); it != m.vocab.end()) {
      ids.push_back(it->second);
      ranges.push_back({0, text.size()});
      return;
    }
  }
  std::vector<Symbol> sym = initial_symbols(m, text);
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto consider = [&](int left) {
    if (left < 0 || sym[left].next < 0) return;
    const Symbol& a = sym[left];
    const Symbol& b = sym[a.next];
    if (const auto it = m.merges.find(BpeModel::pair(a.id, b.id)); it != m.merges.end())
      heap.push({it->second.rank, a.begin, left, a.id, b.id});
  };
  for (size_t k = 0; k + 1 < sym.size(); ++k) consider(static_cast<int>(k));
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Symbol& a = sym[c.left];
    if (!a.alive || a.id != c.left_id || a.next < 0 || sym[a.next].id != c.right_id) continue;  // stale
    Symbol& b = sym[a.next];
    a.id = m.merges.at(BpeModel::pair(a.id, b.id)).result;
    a.end = b.end;
    a.next = b.next;
    b.alive = false;
    if (a.next >= 0) sym[a.next].prev = c.left;
    consider(a.prev);
    consider(c.left);
  }
  for (const Symbol& s : sym) {
    if (!s.alive) continue;
    ids.push_back(s.id);
    ranges.push_back({s.begin, s.end});
  }
}

}  // namespace attnsim::model::hf
