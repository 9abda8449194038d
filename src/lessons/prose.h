// Numbers in a lesson's prose. Every figure a text states is marked, so that `lesson check`
// can tell an engine figure from a quotation and refuse a number typed in by hand:
//
//   {value:NAME}        filled by the engine when the lesson loads. NAME is a claim's `id`
//   {value:NAME|FMT}    (the claim's quantity under its own tables) or a quantity evaluated
//                       under the text's settings ("trace.alpha.shape", "config.heads").
//   {value:Q@ID}        quantity Q under claim ID's tables: {value:cost.seq@kv} is the
//                       sequence length claim "kv" gave the cost model.
//                       FMT: "," (thousands separators), "raw" (none), ".3f" ".2e" ".3g",
//                       "%" (times 100), a byte unit ("KiB" "MiB" "GiB" "KB" "MB" "GB").
//   {quote:TEXT}        a figure quoted from the article or the literature (shown in its
//                       own style: the engine does not vouch for it)
//   {math:N}            a constant of a formula or a definition (the 4 of 4·d², 2 FLOPs per
//                       multiply-add): an integer from 2 to 9
//
// What counts as a number (bare_numbers): a run of ASCII digits with optional thousands
// separators, decimals and exponent ("262,144", "1e-9", "6.4", "50%", "16칸", "4 MiB"),
// outside the marks. Not numbers: digits inside a name (letters or "_" before them, or a
// letter and "-": float32, W_O, fp16, d_k2, GPT-3) and the bare constants 0 and 1 (a row sums
// to 1, a hidden weight is 0, index 0), which are the arithmetic of every lesson rather
// than figures. Shape tuples are numbers ("(1, 4, 6, 6)" is four of them): write
// {value:trace.alpha.shape}, which fills as "(1, 4, 6, 6)". Letters in a tuple ((B, T, d))
// are symbols, not numbers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lessons/quantity.h"

namespace attnsim::lessons {

struct Mark {
  enum class Kind { Value, Quote, Math };
  Kind kind = Kind::Value;
  std::string body;    // NAME|FMT, the quoted text, the constant
  size_t begin = 0;    // byte offsets of "{" and one past "}" in the text
  size_t end = 0;
};

// The marks of a text, in order. An unterminated or unknown "{word:" is reported in
// `problems` as (offset, message) and left out.
std::vector<Mark> find_marks(const std::string& text,
                             std::vector<std::pair<size_t, std::string>>* problems = nullptr);

struct BareNumber {
  size_t offset = 0;   // byte offset in the text
  std::string token;   // "262,144", "1e-9", "6.4"
  double value = 0;    // separators removed
};
// Numbers outside the marks that are not names and not a bare 0 or 1.
std::vector<BareNumber> bare_numbers(const std::string& text);

// NAME and FMT of a {value:NAME|FMT} body.
struct ValueRef {
  std::string name, format;
};
ValueRef parse_value_ref(const std::string& body);
// True when FMT is one of the formats above; `why` lists them otherwise.
bool is_known_format(const std::string& format, std::string* why);

// An engine value as prose shows it: integers below 10,000 plain ("4096"), larger ones with
// separators ("262,144"), fractions with 3 significant digits ("0.167", "1e-7"), lists as a
// tuple ("(1, 4, 6, 6)"), text as itself.
std::string format_for_prose(const Value& value, const std::string& format = "");

// The text with every {value:...} replaced (fill(body) gives the figure); quote and math marks
// are kept for the markup to style. A Korean particle pair right after a value mark
// ("{value:x}은/는", see particle_pair_at) becomes the form the figure takes; a pair after a
// figure whose sound is unknown is kept as written (fill_values reports it).
std::string fill_marks(const std::string& text, const std::vector<Mark>& marks,
                       const std::vector<std::string>& filled);

// [SECTION] Korean particles after a figure
//
// A Korean particle changes with the sound the word before it ends in: 512는 (오백십이, a
// vowel), 64와 (육십사), 16과 (십육, a consonant), 4.68과 (사 점 육팔), 7로 (칠: ㄹ takes 로),
// 3으로 (삼). A filled figure is not known when the lesson is written, so the text writes the
// pair and the fill picks: `{value:x}은/는`, `이/가`, `을/를`, `와/과`, `으로/로` (either
// order; `**` or a backquote may sit between the mark and the pair). The figure is read the
// Sino-Korean way: the last digit of an integer (0 영 1 일 2 이 3 삼 4 사 5 오 6 육 7 칠 8 팔
// 9 구) or, for trailing zeros, its last place (십 백 천 만 ... 억, 조 ends in a vowel); the
// last digit of a decimal; the exponent of 1e-7; a unit's name (% 퍼센트, B / KiB / GB 바이트:
// vowels); the last number of a tuple; a Hangul syllable's own final consonant.
enum class FinalSound { Vowel, Rieul, Consonant, Unknown };
FinalSound korean_final_sound(const std::string& figure);

struct ParticlePair {
  size_t length = 0;              // bytes of the pair in the text ("은/는": 7)
  std::string consonant, vowel;   // 은 and 는; 으로 and 로 (ㄹ takes the vowel form)
};
// The pair written at text[at] (after skipping '*' and '`'), or length 0. `skipped` gets how
// many marker bytes came first.
ParticlePair particle_pair_at(const std::string& text, size_t at, size_t* skipped = nullptr);
// The pair's form for a sound; "" for FinalSound::Unknown.
std::string pick_particle(const ParticlePair& pair, FinalSound sound);
// A single particle written right after a figure (at text[at], after '*' and '`') that does
// not fit the figure's sound: the form that does, e.g. "는" for "512은". "" when there is no
// particle there, it fits, or the sound is unknown. 이, 가 and 로 only count when no Hangul
// follows them (이다, 가지, 로그 are not particles).
std::string wrong_particle(const std::string& text, size_t at, const std::string& figure,
                           std::string* written = nullptr);
// The copula's short form right after a figure (at text[at], after '*' and '`'): "다" or "였",
// else "". It fits only a figure that ends in a vowel (4다, 4였다); 이다 / 이었다 fit any.
std::string bare_copula_at(const std::string& text, size_t at);

}  // namespace attnsim::lessons
