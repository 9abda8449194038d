// libFuzzer target: the tokenizer's normalizer and pre-tokenizer chain (issue 37), built from
// the input's bytes rather than parsed from JSON, so the fuzzer spends its time on the chain:
//   byte 0        steps n (mod 8)
//   per step      a kind byte, then a length byte and that many bytes of its string(s)
//   the rest      the text
// The chain must give pieces whose spans lie in order inside the text and whose bytes map back
// one for one, or throw attnsim::Error (text NFC would change, text the budget refuses);
// never a crash, never more than the budget's bytes.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/error.h"
#include "model/text/hf_pipeline.h"

using namespace attnsim::model::hf;

namespace {

struct Reader {
  const uint8_t* p;
  size_t n, at = 0;
  uint8_t byte() { return at < n ? p[at++] : 0; }
  std::string text(size_t len) {
    len = std::min(len, n - std::min(at, n));
    std::string s(reinterpret_cast<const char*>(p + at), len);
    at += len;
    return s;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r{data, size};
  std::vector<NormalizeStep> normalizer;
  std::vector<PreTokenizeStep> pre;
  const int steps = r.byte() % 8;
  for (int i = 0; i < steps; ++i) {
    const uint8_t kind = r.byte() % 7;
    const std::string a = r.text(r.byte() % 8), b = r.text(r.byte() % 8);
    if (kind == 0) normalizer.push_back({NormalizeStep::Prepend, a, ""});
    if (kind == 1) normalizer.push_back({NormalizeStep::Replace, a, b});
    if (kind == 2) normalizer.push_back({NormalizeStep::Nfc, "", ""});
    PreTokenizeStep s{};
    s.kind = kind == 3 ? PreTokenizeStep::ByteLevel : kind == 4 ? PreTokenizeStep::Split
           : kind == 5 ? PreTokenizeStep::Digits : PreTokenizeStep::Metaspace;
    s.add_prefix_space = !a.empty() && (a[0] & 1);
    s.individual_digits = !b.empty() && (b[0] & 1);
    s.replacement = a.empty() ? "\u2581" : a;
    s.split = b.empty() || (b[0] & 2);
    if (kind >= 3) pre.push_back(s);
  }
  const std::string text = r.text(size);
  try {
    NormalizeBudget budget{text.size()};
    budget.check_bound(text.size(), normalizer);
    Piece whole = Piece::of(text, 0, text.size());
    normalize(whole, normalizer, budget);
    size_t total = 0;
    pre_tokenize(std::move(whole), pre, true, budget, [&](const Piece& p) {
      // a mapped piece has one span per byte; an unmapped one lies in the input whole
      if (p.mapped && (p.from.size() != p.text.size() || p.to.size() != p.text.size())) __builtin_trap();
      for (size_t i = 0; i < p.text.size(); ++i) {
        const Span s = p.span(i, i + 1);
        if (s.begin > s.end || s.end > text.size()) __builtin_trap();
      }
      total += p.text.size();
    });
    if (total > static_cast<size_t>(kMaxNormalizedBytes)) __builtin_trap();
  } catch (const attnsim::Error&) {
  }
  return 0;
}
