#include "model/text/hf_split.h"

#include "engine/error.h"
#include "model/text/hf_unicode.h"

namespace attnsim::model::hf {

namespace {

constexpr std::string_view kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum Class { Letter, Number, Space, Other };

struct Unit {
  uint32_t cp;
  uint32_t begin;  // byte offset in the text (split_words takes texts under 4 GiB)
};

// 8 bytes a unit, reserved once for the most units the text can hold (one a byte): the
// tokenizer splits texts of up to 16 MiB whole, and a vector that doubles as it grows held up
// to four times that (issue 49).
struct Units {
  std::vector<Unit> u;
  size_t bytes;
  explicit Units(std::string_view text) : bytes(text.size()) {
    if (uint64_t{text.size()} > UINT32_MAX) throw Error("split_words: the text is larger than 4 GiB");
    u.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      const CodeUnit c = next_unit(text, i);
      u.push_back({c.cp, static_cast<uint32_t>(i)});
      i += c.len;
    }
  }
  size_t n() const { return u.size(); }
  size_t byte(size_t k) const { return k < u.size() ? u[k].begin : bytes; }  // unit index -> byte offset
  uint32_t cp(size_t k) const { return k < u.size() ? u[k].cp : kInvalidByte; }
  Class cls(size_t k) const {
    const uint32_t c = u[k].cp;
    if (is_letter(c)) return Letter;
    if (is_number(c)) return Number;
    if (is_whitespace(c)) return Space;
    return Other;  // punctuation, symbols, controls that are not White_Space, invalid bytes
  }
  bool is(size_t k, Class c) const { return k < u.size() && cls(k) == c; }
  size_t run(size_t k, Class c) const {  // the end of the run of class c starting at k
    while (k < u.size() && cls(k) == c) ++k;
    return k;
  }
};

// 's 't 're 've 'm 'll 'd at k: the number of units it spans, or 0. (?i) folds ASCII case, and
// 's' also matches U+017F (long s), as simple case folding has it.
size_t contraction(const Units& t, size_t k, bool fold) {
  if (t.cp(k) != '\'') return 0;
  auto is = [&](size_t at, char lower) {
    const uint32_t c = t.cp(at);
    if (c == static_cast<uint32_t>(lower)) return true;
    return fold && (c == static_cast<uint32_t>(lower - 'a' + 'A') || (lower == 's' && c == 0x17F));
  };
  for (const char* two : {"re", "ve", "ll"})
    if (is(k + 1, two[0]) && is(k + 2, two[1])) return 3;
  for (const char one : {'s', 't', 'm', 'd'})
    if (is(k + 1, one)) return 2;
  return 0;
}

// \s+(?!\S)|\s+ at a whitespace unit k: the run, less its last unit when a non-space follows
// and the run has more than one (that unit then leads the next piece: " word").
size_t trailing_space(const Units& t, size_t k) {
  const size_t r = t.run(k, Space);
  if (r == t.n() || r - k == 1) return r;
  return r - 1;
}

// GPT-2: one piece starting at unit k; returns the unit index past it.
size_t gpt2_piece(const Units& t, size_t k) {
  if (const size_t c = contraction(t, k, false)) return k + c;
  if (t.cp(k) == ' ' && k + 1 < t.n() && t.cls(k + 1) != Space) return t.run(k + 1, t.cls(k + 1));  // " ?X+"
  if (t.cls(k) != Space) return t.run(k, t.cls(k));
  return trailing_space(t, k);
}

bool newline(uint32_t c) { return c == '\r' || c == '\n'; }

// Llama 3 and Qwen2: one piece starting at unit k.
size_t llama3_piece(const Units& t, size_t k, size_t max_digits) {
  if (const size_t c = contraction(t, k, true)) return k + c;
  const Class c = t.cls(k);
  if (c == Letter) return t.run(k, Letter);
  if ((c == Space || c == Other) && !newline(t.cp(k)) && t.is(k + 1, Letter)) return t.run(k + 1, Letter);
  if (c == Number) {
    size_t end = k;
    while (end < t.n() && end - k < max_digits && t.cls(end) == Number) ++end;
    return end;
  }
  if (c == Other || (t.cp(k) == ' ' && t.is(k + 1, Other))) {  // " ?[^\s\p{L}\p{N}]+[\r\n]*"
    size_t end = t.run(c == Other ? k : k + 1, Other);
    while (end < t.n() && newline(t.cp(end))) ++end;
    return end;
  }
  // \s*[\r\n]+: the whitespace run up to and including its last \r or \n
  const size_t r = t.run(k, Space);
  for (size_t q = r; q > k; --q)
    if (newline(t.cp(q - 1))) return q;
  return trailing_space(t, k);
}

}  // namespace

std::optional<SplitPattern> known_pattern(std::string_view regex) {
  if (regex == kGpt2) return SplitPattern::Gpt2;
  if (regex == kLlama3) return SplitPattern::Llama3;
  if (regex == kQwen2) return SplitPattern::Qwen2;
  return std::nullopt;
}

const char* pattern_name(SplitPattern p) {
  switch (p) {
    case SplitPattern::Gpt2: return "GPT-2";
    case SplitPattern::Llama3: return "Llama 3";
    case SplitPattern::Qwen2: return "Qwen2";
  }
  return "?";
}

std::vector<ByteRange> split_words(std::string_view text, SplitPattern pattern) {
  const Units t(text);
  std::vector<ByteRange> out;
  for (size_t k = 0; k < t.n();) {
    const size_t next = pattern == SplitPattern::Gpt2     ? gpt2_piece(t, k)
                        : pattern == SplitPattern::Llama3 ? llama3_piece(t, k, 3)
                                                          : llama3_piece(t, k, 1);
    out.push_back({t.byte(k), t.byte(next)});
    k = next;
  }
  return out;
}

}  // namespace attnsim::model::hf
