// Heads named by their strongest pattern. See head_names.h.
#include "views/head_names.h"

#include <cstdio>

namespace attnsim::app {

model::HeadScores chance_scores(const int32_t* tokens, int64_t B, int64_t T) {
  // Uniform causal attention (B,T,T): row i spreads its weight evenly over keys 0..i.
  std::vector<float> uniform(static_cast<size_t>(B * T * T), 0.0f);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j <= i; ++j) uniform[static_cast<size_t>((b * T + i) * T + j)] = 1.0f / static_cast<float>(i + 1);
  return model::score_pattern(uniform.data(), tokens, B, T);
}

model::HeadScores chance_scores(const model::Batch& batch) {
  return chance_scores(batch.tokens.data(), batch.batch, batch.len);
}

model::HeadScores chance_scores(const std::vector<std::vector<int32_t>>& sequences) {
  if (sequences.empty()) return {};
  std::vector<int32_t> flat;
  for (const auto& s : sequences) flat.insert(flat.end(), s.begin(), s.end());
  return chance_scores(flat.data(), static_cast<int64_t>(sequences.size()), static_cast<int64_t>(sequences[0].size()));
}

namespace {

double score_of(HeadPattern p, const model::HeadScores& s) {
  switch (p) {
    case HeadPattern::FirstToken: return s.first;
    case HeadPattern::PreviousToken: return s.previous;
    case HeadPattern::Induction: return s.induction;
    case HeadPattern::Duplicate: return s.duplicate;
    case HeadPattern::CurrentToken: return s.diagonal;
  }
  return 0;
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

}  // namespace

HeadName pattern_name(HeadPattern pattern, const model::HeadScores& head, const model::HeadScores& chance) {
  return {pattern, score_of(pattern, head), score_of(pattern, chance)};
}

HeadName name_head(const model::HeadScores& head, const model::HeadScores& chance) {
  HeadName best = pattern_name(kHeadPatterns[0], head, chance);
  for (HeadPattern p : kHeadPatterns) {
    const HeadName n = pattern_name(p, head, chance);
    if (n.lift() > best.lift()) best = n;
  }
  return best;
}

std::string pattern_word(HeadPattern p, Lang lang) {
  switch (p) {
    case HeadPattern::FirstToken: return tr_in(lang, "first token");
    case HeadPattern::PreviousToken: return tr_in(lang, "previous token");
    case HeadPattern::Induction: return tr_in(lang, "induction");
    case HeadPattern::Duplicate: return tr_in(lang, "earlier copy");
    case HeadPattern::CurrentToken: return tr_in(lang, "current token");
  }
  return "";
}

std::string pattern_short(HeadPattern p, Lang lang) {
  switch (p) {
    case HeadPattern::FirstToken: return tr_in(lang, "first");
    case HeadPattern::PreviousToken: return tr_in(lang, "prev.");
    case HeadPattern::Induction: return tr_in(lang, "ind.");
    case HeadPattern::Duplicate: return tr_in(lang, "dup.");
    case HeadPattern::CurrentToken: return tr_in(lang, "self");
  }
  return "";
}

const char* pattern_role(HeadPattern p) {
  switch (p) {
    case HeadPattern::FirstToken: return "first-token";
    case HeadPattern::PreviousToken: return "previous-token";
    case HeadPattern::Induction: return "induction";
    case HeadPattern::Duplicate: return "duplicate-token";
    case HeadPattern::CurrentToken: return "diagonal";
  }
  return "";
}

std::string head_name_text(const HeadName& n, Lang lang) {
  return pattern_word(n.pattern, lang) + " " + number(n.score) + " · " + tr_in(lang, "chance") + " " + number(n.chance);
}

std::string head_chance_text(const HeadName& n, Lang lang) { return tr_in(lang, "chance") + (" " + number(n.chance)); }

std::vector<std::string> head_name_forms(const HeadName& n, Lang lang) {
  const std::string word = pattern_word(n.pattern, lang), abbr = pattern_short(n.pattern, lang);
  const std::string score = number(n.score), chance = " · " + head_chance_text(n, lang);
  std::vector<std::string> forms = {word + " " + score + chance, abbr + " " + score + chance, word + " " + score,
                                    abbr + " " + score, abbr};
  // A language whose word is already short gives the same form twice: keep each once.
  std::vector<std::string> out;
  for (std::string& f : forms)
    if (out.empty() || out.back() != f) out.push_back(std::move(f));
  return out;
}

std::string fit_head_name(const HeadName& n, Lang lang, float width, const std::function<float(const std::string&)>& measure) {
  for (const std::string& f : head_name_forms(n, lang))
    if (measure(f) <= width) return f;
  return "";
}

std::string head_name_sentence(const HeadName& n, Lang lang) {
  const double s = 100 * n.score, c = 100 * n.chance;
  switch (n.pattern) {
    case HeadPattern::FirstToken:
      return trf_in(lang, "This head puts %.0f %% of its weight on the first token; a head that spread evenly would put %.0f %% there.", s, c);
    case HeadPattern::PreviousToken:
      return trf_in(lang, "This head puts %.0f %% of its weight on the previous token; a head that spread evenly would put %.0f %% there.", s, c);
    case HeadPattern::Induction:
      return trf_in(lang, "This head puts %.0f %% of its weight on the token after an earlier copy of the current one (induction); a head that spread evenly would put %.0f %% there.", s, c);
    case HeadPattern::Duplicate:
      return trf_in(lang, "This head puts %.0f %% of its weight on earlier copies of the current token; a head that spread evenly would put %.0f %% there.", s, c);
    case HeadPattern::CurrentToken:
      return trf_in(lang, "This head puts %.0f %% of its weight on the current token itself; a head that spread evenly would put %.0f %% there.", s, c);
  }
  return "";
}

}  // namespace attnsim::app
