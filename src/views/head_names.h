// A head named by what it does, in the UI language: its strongest attention pattern, the
// head's score of that pattern, and the score a head that spread its weight evenly would get on
// the same tokens (its chance), e.g. "previous token 0.26 · chance 0.03".
//
// The scores are model/heads.h's (score_pattern); the chance is the same function applied to
// uniform causal attention on the same tokens: row i puts 1/(i+1) on each of keys 0..i. So for
// the first-token and previous-token shares it is the mean over rows i >= 1 of 1/(i+1), for
// induction and duplicate-token the mean over the rows that have a target of
// (number of targets)/(i+1): it depends on the sequence lengths and on how often tokens repeat,
// never a constant.
//
// The old role labels (model::role_label: "induction", "mixed", ...) stay for the code and
// lessons that select heads by role; these names are what a learner reads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/training/heads.h"
#include "model/pass/forward.h"
#include "views/i18n.h"

namespace attnsim::app {

// The patterns a head is named by (heads.h's score of each in brackets).
enum class HeadPattern {
  FirstToken,     // weight on the sequence's first token            (first: share, rows i >= 1)
  PreviousToken,  // weight on the token just before                  (previous: per target row)
  Induction,      // weight on the token after an earlier copy of the current one (induction)
  Duplicate,      // weight on earlier copies of the current token    (duplicate)
  CurrentToken,   // weight on the current token itself               (diagonal: share)
};
inline constexpr HeadPattern kHeadPatterns[] = {HeadPattern::FirstToken, HeadPattern::PreviousToken,
                                                HeadPattern::Induction, HeadPattern::Duplicate,
                                                HeadPattern::CurrentToken};

struct HeadName {
  HeadPattern pattern = HeadPattern::FirstToken;
  double score = 0;   // the head's score of `pattern`
  double chance = 0;  // uniform causal attention's score of `pattern` on the same tokens
  // How far the head moved from even spreading towards the pure pattern: 0 at chance, 1 when
  // all its weight is on the pattern, below 0 when it avoids it.
  double lift() const { return chance < 1 ? (score - chance) / (1 - chance) : 0.0; }
};

// heads.h's scores of uniform causal attention on tokens (B,T), row-major: every head's chance.
model::HeadScores chance_scores(const int32_t* tokens, int64_t B, int64_t T);
model::HeadScores chance_scores(const model::Batch& batch);
model::HeadScores chance_scores(const std::vector<std::vector<int32_t>>& sequences);  // of equal length

// The score and chance of one pattern.
HeadName pattern_name(HeadPattern pattern, const model::HeadScores& head, const model::HeadScores& chance);
// The head's strongest pattern: the largest lift() (ties: kHeadPatterns order). Not the largest
// ratio score / chance: a pattern with few targets has a tiny chance (induction on text that
// rarely repeats), and a small excess over it would win although the head puts little weight
// there; the lift compares every pattern on one 0..1 scale of the weight the head could move.
HeadName name_head(const model::HeadScores& head, const model::HeadScores& chance);

// The pattern's word ("previous token" / "앞 토큰") and its short form ("prev." / "앞").
std::string pattern_word(HeadPattern pattern, Lang lang);
std::string pattern_short(HeadPattern pattern, Lang lang);
// The role label (model::role_label) of the same pattern: "previous-token", ...
const char* pattern_role(HeadPattern pattern);

// "previous token 0.26 · chance 0.03" / "앞 토큰 0.26 · 우연 0.03"
std::string head_name_text(const HeadName& name, Lang lang);
// "chance 0.03" / "우연 0.03": the second line of a two-line badge.
std::string head_chance_text(const HeadName& name, Lang lang);
// The forms a cell can show, longest first, each a shorter one than the last:
// "previous token 0.26 · chance 0.03", "prev. 0.26 · chance 0.03", "previous token 0.26",
// "prev. 0.26", "prev.".
std::vector<std::string> head_name_forms(const HeadName& name, Lang lang);
// The longest form whose measured width is at most `width`; "" when none fits (the cell then
// shows no name rather than a cut one; the tooltip has the sentence).
std::string fit_head_name(const HeadName& name, Lang lang, float width,
                          const std::function<float(const std::string&)>& measure);
// One sentence for a tooltip: "This head puts 91 % of its weight on the first token; a head that
// spread evenly would put 6 % there."
std::string head_name_sentence(const HeadName& name, Lang lang);

}  // namespace attnsim::app
