#include "hf_pipeline.h"

#include <cstdio>

#include "engine/error.h"
#include "hf_unicode.h"

namespace attnsim::model::hf {

namespace {

void prepend(Piece& p, const std::string& what) {
  const size_t at = p.from.empty() ? 0 : p.from.front();
  p.text.insert(0, what);
  p.from.insert(p.from.begin(), what.size(), at);
  p.to.insert(p.to.begin(), what.size(), at);
}

void replace_all(Piece& p, const std::string& pattern, const std::string& content) {
  if (pattern.empty()) return;
  Piece out;
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
      throw Error(std::string("tokenizer: the text has ") + cp + " (at byte " + std::to_string(p.from[i]) +
                  "), which NFC normalization could change; this tokenizer normalizes to NFC and attnsim runs "
                  "it only on text that is already NFC (precomposed)");
    }
    i += u.len;
  }
}

using Pieces = std::vector<Piece>;

// Cuts every piece at the given ranges (which cover it).
template <class Cut>
Pieces cut_each(const Pieces& in, Cut cut) {
  Pieces out;
  for (const Piece& p : in)
    for (const ByteRange& r : cut(p.text)) out.push_back(p.sub(r.first, r.second));
  return out;
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

Piece Piece::of(const std::string& input, size_t begin, size_t end) {
  Piece p;
  p.text = input.substr(begin, end - begin);
  for (size_t i = begin; i < end; ++i) {
    p.from.push_back(i);
    p.to.push_back(i + 1);
  }
  return p;
}

Piece Piece::sub(size_t begin, size_t end) const {
  Piece p;
  p.text = text.substr(begin, end - begin);
  p.from.assign(from.begin() + begin, from.begin() + end);
  p.to.assign(to.begin() + begin, to.begin() + end);
  return p;
}

Span Piece::span(size_t begin, size_t end) const {
  Span s{from[begin], to[begin]};
  for (size_t i = begin; i < end; ++i) {
    s.begin = std::min(s.begin, from[i]);
    s.end = std::max(s.end, to[i]);
  }
  return s;
}

void normalize(Piece& piece, const std::vector<NormalizeStep>& steps) {
  for (const NormalizeStep& s : steps) {
    switch (s.kind) {
      case NormalizeStep::Prepend:
        if (!piece.text.empty()) prepend(piece, s.text);
        break;
      case NormalizeStep::Replace: replace_all(piece, s.text, s.content); break;
      case NormalizeStep::Nfc: check_nfc(piece); break;
    }
  }
}

std::vector<Piece> pre_tokenize(Piece piece, const std::vector<PreTokenizeStep>& steps, bool first) {
  Pieces pieces{std::move(piece)};
  for (const PreTokenizeStep& s : steps) {
    switch (s.kind) {
      case PreTokenizeStep::ByteLevel:
        if (s.add_prefix_space)
          for (Piece& p : pieces)
            if (!p.text.empty() && p.text[0] != ' ') prepend(p, " ");
        if (s.use_regex) pieces = cut_each(pieces, [&](const std::string& t) { return split_words(t, s.pattern); });
        break;  // the bytes become GPT-2 characters in bpe_encode (BpeModel::byte_level)
      case PreTokenizeStep::Split:
        pieces = cut_each(pieces, [&](const std::string& t) { return split_words(t, s.pattern); });
        break;
      case PreTokenizeStep::Digits:
        pieces = cut_each(pieces, [&](const std::string& t) { return digit_runs(t, s.individual_digits); });
        break;
      case PreTokenizeStep::Metaspace:
        for (size_t k = 0; k < pieces.size(); ++k) {
          Piece& p = pieces[k];
          replace_all(p, " ", s.replacement);
          const bool add =
              s.prepend == PreTokenizeStep::Always || (s.prepend == PreTokenizeStep::First && first && k == 0);
          if (add && !p.text.empty() && p.text.compare(0, s.replacement.size(), s.replacement) != 0)
            prepend(p, s.replacement);
        }
        if (s.split)
          pieces = cut_each(pieces, [&](const std::string& t) { return before_each(t, s.replacement); });
        break;
    }
  }
  return pieces;
}

}  // namespace attnsim::model::hf
