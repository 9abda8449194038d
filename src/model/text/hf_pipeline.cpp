#include "model/text/hf_pipeline.h"

#include <cmath>
#include <cstdio>

#include "engine/cost.h"
#include "engine/error.h"
#include "model/text/hf_unicode.h"

namespace attnsim::model::hf {

namespace {

void prepend(Piece& p, const std::string& what, NormalizeBudget& budget, const char* stage) {
  budget.add(what.size(), stage);
  p.map_bytes();
  const size_t at = p.from.empty() ? p.base : p.from.front();
  p.text.insert(0, what);
  p.from.insert(p.from.begin(), what.size(), at);
  p.to.insert(p.to.begin(), what.size(), at);
}

// Occurrences replace_all would rewrite (left to right, not overlapping).
size_t count_matches(const std::string& text, const std::string& pattern) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(pattern, at)) != std::string::npos; at += pattern.size()) ++n;
  return n;
}

void replace_all(Piece& p, const std::string& pattern, const std::string& content, NormalizeBudget& budget,
                 const char* stage) {
  if (pattern.empty()) return;
  const size_t n = count_matches(p.text, pattern);
  if (n == 0) return;
  p.map_bytes();
  if (content.size() > pattern.size()) budget.add(n * (content.size() - pattern.size()), stage);
  else budget.total -= n * (pattern.size() - content.size());
  Piece out;
  out.mapped = true;
  const size_t size = p.text.size() - n * pattern.size() + n * content.size();
  out.text.reserve(size);
  out.from.reserve(size);
  out.to.reserve(size);
  for (size_t i = 0; i < p.text.size();) {
    if (p.text.compare(i, pattern.size(), pattern) == 0) {
      const Span s = p.span(i, i + pattern.size());
      out.text += content;
      out.from.insert(out.from.end(), content.size(), s.begin);
      out.to.insert(out.to.end(), content.size(), s.end);
      i += pattern.size();
    } else {
      out.text += p.text[i];
      out.from.push_back(p.from[i]);
      out.to.push_back(p.to[i]);
      ++i;
    }
  }
  p = std::move(out);
}

void check_nfc(const Piece& p) {
  for (size_t i = 0; i < p.text.size();) {
    const CodeUnit u = next_unit(p.text, i);
    if (nfc_may_change(u.cp)) {
      char cp[16];
      std::snprintf(cp, sizeof cp, "U+%04X", static_cast<unsigned>(u.cp));
      throw Error(std::string("tokenizer: the text has ") + cp + " (at byte " + std::to_string(p.span(i, i + 1).begin) +
                  "), which NFC normalization could change; this tokenizer normalizes to NFC and attnsim runs "
                  "it only on text that is already NFC (precomposed)");
    }
    i += u.len;
  }
}

std::vector<ByteRange> digit_runs(const std::string& text, bool individual) {
  std::vector<ByteRange> out;
  size_t start = 0;
  bool in_digits = false;
  for (size_t i = 0; i < text.size();) {
    const CodeUnit u = next_unit(text, i);
    const bool digit = is_number(u.cp);
    if (i > start && (digit != in_digits || (digit && individual))) {
      out.push_back({start, i});
      start = i;
    }
    in_digits = digit;
    i += u.len;
  }
  if (start < text.size()) out.push_back({start, text.size()});
  return out;
}

std::vector<ByteRange> before_each(const std::string& text, const std::string& mark) {  // MergedWithNext
  std::vector<ByteRange> out;
  size_t start = 0;
  for (size_t i = mark.size(); !mark.empty() && (i = text.find(mark, i)) != std::string::npos; i += mark.size()) {
    out.push_back({start, i});
    start = i;
  }
  if (start < text.size()) out.push_back({start, text.size()});
  return out;
}

}  // namespace

void NormalizeBudget::add(size_t grow, const std::string& what) {
  const auto limit = static_cast<size_t>(kMaxNormalizedBytes);
  if (grow <= limit && total <= limit - grow) {
    total += grow;
    return;
  }
  const double need = (static_cast<double>(total) + static_cast<double>(grow)) * kPieceBytesPerByte;
  throw Error("tokenizer: the " + what + " would make the " + format_count(static_cast<int64_t>(input)) +
              "-byte text longer than " + human_bytes(kMaxNormalizedBytes) + " (" +
              format_count(static_cast<int64_t>(total)) + " + " + format_count(static_cast<int64_t>(std::min<size_t>(grow, INT64_MAX))) +
              " bytes, about " + human_bytes(static_cast<int64_t>(std::min(need, 9.2e18))) +
              " with its span bookkeeping); attnsim tokenizes at most " + human_bytes(kMaxNormalizedBytes) +
              " of normalized text");
}

double normalized_bound(size_t len, const std::vector<NormalizeStep>& steps) {
  double bound = static_cast<double>(len);  // doubles: a chain of 64 doublings is 2^64 times
  for (const NormalizeStep& s : steps) {
    if (s.kind == NormalizeStep::Prepend) bound += static_cast<double>(s.text.size());
    if (s.kind == NormalizeStep::Replace && s.content.size() > s.text.size() && !s.text.empty())
      bound += std::floor(bound / static_cast<double>(s.text.size())) * static_cast<double>(s.content.size() - s.text.size());
  }
  return bound;
}

void NormalizeBudget::check_bound(size_t len, const std::vector<NormalizeStep>& steps) const {
  const double bound = normalized_bound(len, steps);
  const double limit = static_cast<double>(kMaxNormalizedBytes), others = static_cast<double>(total - len);
  if (others + bound <= limit) return;
  char figure[32];
  std::snprintf(figure, sizeof figure, "%.3g", bound);
  throw Error("tokenizer: the normalizer's " + std::to_string(steps.size()) + " steps could make this " +
              format_count(static_cast<int64_t>(len)) + "-byte text " + figure + " bytes long (" +
              (bound * kPieceBytesPerByte < 9.2e18 ? human_bytes(static_cast<int64_t>(bound * kPieceBytesPerByte))
                                                    : std::string("over 8 EiB")) +
              " with its span bookkeeping); attnsim tokenizes at most " + human_bytes(kMaxNormalizedBytes) +
              " of normalized text");
}

Piece Piece::of(const std::string& input, size_t begin, size_t end) {
  Piece p;
  p.text = input.substr(begin, end - begin);
  p.base = begin;
  return p;
}

Piece Piece::sub(size_t begin, size_t end) const {
  Piece p;
  p.text = text.substr(begin, end - begin);
  p.mapped = mapped;
  p.base = base + begin;
  if (mapped) {
    p.from.assign(from.begin() + begin, from.begin() + end);
    p.to.assign(to.begin() + begin, to.begin() + end);
  }
  return p;
}

Span Piece::span(size_t begin, size_t end) const {
  if (!mapped) return {base + begin, base + end};
  Span s{from[begin], to[begin]};
  for (size_t i = begin; i < end; ++i) {
    s.begin = std::min(s.begin, from[i]);
    s.end = std::max(s.end, to[i]);
  }
  return s;
}

void Piece::map_bytes() {
  if (mapped) return;
  from.resize(text.size());
  to.resize(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    from[i] = base + i;
    to[i] = base + i + 1;
  }
  mapped = true;
}

void normalize(Piece& piece, const std::vector<NormalizeStep>& steps, NormalizeBudget& budget) {
  for (const NormalizeStep& s : steps) {
    switch (s.kind) {
      case NormalizeStep::Prepend:
        if (!piece.text.empty()) prepend(piece, s.text, budget, "normalizer Prepend");
        break;
      case NormalizeStep::Replace: replace_all(piece, s.text, s.content, budget, "normalizer Replace"); break;
      case NormalizeStep::Nfc: check_nfc(piece); break;
    }
  }
}

namespace {

// The pre-tokenizer steps, depth first: each word a step cuts goes through the steps after it
// before the next word is cut, so the words reach emit in order, one at a time.
struct PreTokenizer {
  const std::vector<PreTokenizeStep>& steps;
  bool first;
  NormalizeBudget& budget;
  const std::function<void(const Piece&)>& emit;
  std::vector<size_t> given = std::vector<size_t>(steps.size());  // per step: pieces it has had

  void run(Piece p, size_t at) {
    if (at == steps.size()) return emit(p);
    const PreTokenizeStep& s = steps[at];
    const size_t k = given[at]++;
    const auto cut = [&](const std::vector<ByteRange>& words) {
      if (words.size() == 1) return run(std::move(p), at + 1);  // the whole piece: no copy of it alive
      for (const ByteRange& r : words) run(p.sub(r.first, r.second), at + 1);
    };
    switch (s.kind) {
      case PreTokenizeStep::ByteLevel:
        if (s.add_prefix_space && !p.text.empty() && p.text[0] != ' ')
          prepend(p, " ", budget, "pre_tokenizer ByteLevel prefix space");
        if (s.use_regex) return cut(split_words(p.text, s.pattern));
        return run(std::move(p), at + 1);  // the bytes become GPT-2 characters in bpe_encode (BpeModel::byte_level)
      case PreTokenizeStep::Split: return cut(split_words(p.text, s.pattern));
      case PreTokenizeStep::Digits: return cut(digit_runs(p.text, s.individual_digits));
      case PreTokenizeStep::Metaspace: {
        replace_all(p, " ", s.replacement, budget, "pre_tokenizer Metaspace");
        const bool add = s.prepend == PreTokenizeStep::Always || (s.prepend == PreTokenizeStep::First && first && k == 0);
        if (add && !p.text.empty() && p.text.compare(0, s.replacement.size(), s.replacement) != 0)
          prepend(p, s.replacement, budget, "pre_tokenizer Metaspace");
        if (s.split) return cut(before_each(p.text, s.replacement));
        return run(std::move(p), at + 1);
      }
    }
  }
};

}  // namespace

void pre_tokenize(Piece piece, const std::vector<PreTokenizeStep>& steps, bool first, NormalizeBudget& budget,
                  const std::function<void(const Piece&)>& emit) {
  PreTokenizer{steps, first, budget, emit}.run(std::move(piece), 0);
}

}  // namespace attnsim::model::hf
