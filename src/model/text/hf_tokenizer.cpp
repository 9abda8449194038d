#include "model/text/hf_tokenizer.h"

#include <algorithm>
#include <cstdio>

#include "engine/checked.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/read_file.h"
#include "model/text/hf_bytes.h"
#include "model/text/hf_pipeline.h"
#include "model/text/hf_unicode.h"

namespace attnsim::model::hf {

namespace {

struct Segment {
  size_t begin, end;
  int32_t added = -1;  // the added token's id, or -1 for text the model tokenizes
};

// The input cut at added tokens: at each position the longest added token that starts there.
std::vector<Segment> split_added(const std::string& text, const std::vector<AddedToken>& added, const AddedTrie& trie) {
  std::vector<Segment> out;
  if (added.empty()) {
    if (!text.empty()) out.push_back({0, text.size()});
    return out;
  }
  size_t start = 0;
  for (size_t i = 0; i < text.size();) {
    const int32_t k = trie.longest_at(text, i);
    if (k < 0) {
      ++i;
      continue;
    }
    const AddedToken& a = added[static_cast<size_t>(k)];
    if (i > start) out.push_back({start, i});
    out.push_back({i, i + a.content.size(), a.id});
    i += a.content.size();
    start = i;
  }
  if (start < text.size()) out.push_back({start, text.size()});
  return out;
}

std::string hex_byte(uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "<0x%02X>", b);
  return buf;
}

// "<0x41>" -> 0x41
std::optional<uint8_t> fallback_byte(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return std::nullopt;
  unsigned v = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = token[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<unsigned>(d);
  }
  return static_cast<uint8_t>(v);
}

}  // namespace

void AddedTrie::insert(const std::string& content, int32_t added_index) {
  if (token_.empty()) token_.push_back(-1);
  uint32_t node = 0;
  for (const char c : content) {
    const auto [it, fresh] = child_.try_emplace(edge(node, static_cast<uint8_t>(c)), static_cast<uint32_t>(token_.size()));
    if (fresh) token_.push_back(-1);
    node = it->second;
  }
  token_[node] = added_index;
}

int32_t AddedTrie::longest_at(const std::string& text, size_t at) const {
  int32_t best = -1;
  uint32_t node = 0;
  for (size_t i = at; i < text.size(); ++i) {
    const auto it = child_.find(edge(node, static_cast<uint8_t>(text[i])));
    if (it == child_.end()) break;
    node = it->second;
    if (token_[node] >= 0) best = token_[node];
  }
  return best;
}

Tokenizer::Tokenizer(TokenizerSpec spec) : spec_(std::move(spec)) {
  added_by_id_.assign(static_cast<size_t>(vocab_size()), -1);
  for (size_t k = 0; k < spec_.added.size(); ++k) {
    added_by_id_[spec_.added[k].id] = static_cast<int32_t>(k);
    added_trie_.insert(spec_.added[k].content, static_cast<int32_t>(k));
  }
}

int64_t Tokenizer::vocab_size() const {
  int64_t n = static_cast<int64_t>(spec_.model.tokens.size());
  for (const AddedToken& a : spec_.added) n = std::max<int64_t>(n, a.id + int64_t{1});
  return n;
}

std::optional<int32_t> Tokenizer::bos_id() const { return spec_.bos; }

std::optional<int32_t> Tokenizer::token_id(const std::string& token) const {
  if (const int32_t k = added_trie_.longest_at(token, 0); k >= 0 && spec_.added[k].content == token)
    return spec_.added[k].id;
  if (const auto it = spec_.model.vocab.find(token); it != spec_.model.vocab.end()) return it->second;
  return std::nullopt;
}

bool Tokenizer::is_special(int32_t id) const {
  return id >= 0 && id < vocab_size() && added_by_id_[id] >= 0 && spec_.added[added_by_id_[id]].special;
}

bool Tokenizer::is_token(int32_t id) const {
  const bool in_model = id >= 0 && static_cast<size_t>(id) < spec_.model.tokens.size() && !spec_.model.tokens[id].empty();
  return in_model || (id >= 0 && id < vocab_size() && added_by_id_[id] >= 0);
}

void Tokenizer::check_id(int32_t id) const {
  if (!is_token(id))
    throw Error("tokenizer: token id " + std::to_string(id) + " is not in the vocabulary (ids 0.." +
                std::to_string(vocab_size() - 1) + ")");
}

void Tokenizer::encode_into(const std::string& text, std::vector<int32_t>& ids, std::vector<Span>* spans) const {
  std::vector<ByteRange> ranges;
  NormalizeBudget budget{text.size()};
  for (const Segment& seg : split_added(text, spec_.added, added_trie_)) {
    if (seg.added >= 0) {
      ids.push_back(seg.added);
      if (spans) spans->push_back({seg.begin, seg.end});
      continue;
    }
    Piece whole = Piece::of(text, seg.begin, seg.end);
    budget.check_bound(seg.end - seg.begin, spec_.normalizer);
    normalize(whole, spec_.normalizer, budget);
    pre_tokenize(std::move(whole), spec_.pre_tokenizer, seg.begin == 0, budget, [&](const Piece& p) {
      if (!spans) return bpe_encode(spec_.model, p.text, ids, nullptr);
      ranges.clear();
      bpe_encode(spec_.model, p.text, ids, &ranges);
      for (const ByteRange& r : ranges) spans->push_back(p.span(r.first, r.second));
    });
  }
}

std::vector<Span> Tokenizer::encode_spans(const std::string& text, std::vector<int32_t>* ids) const {
  std::vector<Span> spans;
  std::vector<int32_t> out;
  encode_into(text, out, &spans);
  if (ids) *ids = std::move(out);
  return spans;
}

// What encode() holds a byte of the text after the pipeline, at most:
//   each piece alive at once (the segment, and one a pre-tokenizer step below it): its text,
//   with kPieceBytesPerByte once a step may have rewritten it
//   each pre-tokenizer step: the words it cut its piece into, a 16-byte range each in a
//   vector that may have doubled
//   split_words on a piece: an 8-byte unit a byte, gone before bpe_encode starts
//   bpe_encode on one word: a 16-byte symbol a unit, and candidates for up to two a unit
//   the tokens: at most one a byte, a 4-byte id each in a vector that may have doubled
constexpr int64_t kRangeBytesPerByte = 2 * 16;
constexpr int64_t kBpeBytesPerByte = 16 + 2 * 16;
constexpr int64_t kIdBytesPerByte = 2 * 4;

int64_t Tokenizer::predict_encode_bytes(int64_t bytes) const {
  double text = normalized_bound(static_cast<size_t>(bytes), spec_.normalizer);
  bool mapped = !spec_.normalizer.empty();
  for (const PreTokenizeStep& s : spec_.pre_tokenizer) {
    if (s.kind == PreTokenizeStep::Metaspace) {  // each space its replacement, each piece one in front
      text *= 1 + static_cast<double>(s.replacement.size());
      mapped = true;
    }
    if (s.kind == PreTokenizeStep::ByteLevel && s.add_prefix_space) {  // a space in front of each piece
      text *= 2;
      mapped = true;
    }
  }
  const auto n = static_cast<int64_t>(std::min(text, static_cast<double>(kMaxNormalizedBytes)));  // NormalizeBudget's limit
  const auto steps = static_cast<int64_t>(spec_.pre_tokenizer.size());
  const Size per_byte = Size(steps + 1) * (mapped ? kPieceBytesPerByte : 1) + Size(steps) * kRangeBytesPerByte +
                        kBpeBytesPerByte + kIdBytesPerByte;
  return (Size(n) * per_byte).value();
}

std::vector<int32_t> Tokenizer::encode(const std::string& text) const {
  std::vector<int32_t> ids;
  encode_into(text, ids, nullptr);  // no spans: 16 bytes a token nobody reads
  return ids;
}

std::string Tokenizer::token_bytes(int32_t id) const {
  check_id(id);
  if (added_by_id_[id] >= 0) return spec_.added[added_by_id_[id]].content;
  const std::string& t = spec_.model.tokens[id];
  const DecodeRule& d = spec_.decoder;
  if (d.byte_fallback)
    if (const auto b = fallback_byte(t)) return std::string(1, static_cast<char>(*b));
  std::string out;
  if (d.byte_level) {
    for (size_t i = 0; i < t.size();) {
      const CodeUnit u = next_unit(t, i);
      if (const auto b = char_to_byte(u.cp)) out += static_cast<char>(*b);
      else out.append(t, i, u.len);  // not a GPT-2 byte character: kept as written
      i += u.len;
    }
  } else {
    out = t;
  }
  if (!d.metaspace.empty())
    for (size_t at = 0; (at = out.find(d.metaspace, at)) != std::string::npos; ++at) out.replace(at, d.metaspace.size(), " ");
  return out;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (const int32_t id : ids) out += token_bytes(id);
  size_t strip = 0;
  while (strip < spec_.decoder.strip_leading && strip < out.size() && out[strip] == ' ') ++strip;
  return out.substr(strip);
}

std::string Tokenizer::token_label(int32_t id) const {
  check_id(id);
  if (added_by_id_[id] >= 0) return spec_.added[added_by_id_[id]].content;
  const std::string bytes = token_bytes(id);
  std::string out;
  for (size_t i = 0; i < bytes.size();) {
    const CodeUnit u = next_unit(bytes, i);
    if (u.cp == ' ') out += kSpaceMark;
    else if (u.cp == '\n') out += kNewlineMark;
    else if (u.cp == '\t') out += kTabMark;
    else if (u.cp == kInvalidByte || u.cp < 0x20 || u.cp == 0x7F) out += hex_byte(static_cast<uint8_t>(bytes[i]));
    else out.append(bytes, i, u.len);
    i += u.len;
  }
  return out;
}

std::string read_text_to_encode(const std::string& path) {
  if (const RegularFile f(path); f.size() > kMaxNormalizedBytes)
    throw Error(path + ": " + format_count(f.size()) + " bytes of text; attnsim's tokenizers encode at most " +
                format_count(kMaxNormalizedBytes) + " bytes (" + human_bytes(kMaxNormalizedBytes) + ") at once");
  return read_text_file(path, kMaxNormalizedBytes);
}

}  // namespace attnsim::model::hf
