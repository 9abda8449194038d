// How close a Korean lesson sentence comes to a sentence of the source article (issue 38):
// the lessons teach the article's facts in their own words and must not reuse its sentences.
//
// The measure: a sentence is cut to the characters that carry wording (Hangul syllables,
// ASCII letters and digits, '_'), after dropping formulas (a whitespace-separated word with
// ×, = or ÷ in it, and the words on both sides of a lone operator: `B × h × T × T` is a fact,
// not wording) and with every {value:...} mark as '#'. Its grams are the character 3-grams
// that hold at least one Hangul syllable, each as FNV-1a 32 of its UTF-8 bytes. Its closeness
// is the largest share of its distinct grams found in one article sentence. The article
// itself is not in the repository: tests/golden/article_3grams.txt holds the grams of each of
// its sentences (tools/article_fingerprint.py, the same rules), so a copied sentence scores 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnsim::lessons {

// Sentences with fewer grams than this are not measured: a short phrase ("파라미터는 그대로")
// shares most of its grams with some sentence by chance.
constexpr size_t kClosenessMinGrams = 10;
// A measured sentence is too close at or above kClosenessLimit, or, with kClosenessLongGrams
// grams or more, at or above kClosenessLongLimit: half of a long sentence from one article
// sentence is a paraphrase, while a short one reaches that share with common phrasing.
// Chosen from measurements (issue 38): before the rewrites 6 of 730 measured sentences were
// at 0.6 or more (top 0.73) and one long one at 0.5 or more; after them, none. Reworded
// article sentences score 0.73 (other endings), 0.87 (clauses swapped), 0.64 (two words
// changed, a short one) and 0.50 (three words swapped, 32 grams); the same fact in other
// words 0.15 (tests/test_lesson_closeness.cpp).
constexpr double kClosenessLimit = 0.6;
constexpr size_t kClosenessLongGrams = 20;
constexpr double kClosenessLongLimit = 0.5;

// A lesson text as written: {value:...} becomes '#', {quote:X} and {math:X} become X.
std::string unmark(const std::string& text);
// Lines, and within a line the pieces ending in '.', '?' or '!' before whitespace.
std::vector<std::string> split_sentences(const std::string& text);
// The sentence's distinct grams, sorted.
std::vector<uint32_t> sentence_grams(const std::string& sentence);

struct ArticleGrams {
  std::vector<std::vector<uint32_t>> sentences;  // sorted grams of each article sentence
};
// One line per article sentence: its grams as 8-digit hex, space-separated; '#' lines are
// comments. Throws attnsim::Error on anything else.
ArticleGrams parse_article_grams(const std::string& text);

// The largest share of `grams` inside one article sentence (0 for no grams).
double closeness(const std::vector<uint32_t>& grams, const ArticleGrams& article);

}  // namespace attnsim::lessons
