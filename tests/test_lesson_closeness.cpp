// The lessons teach the article's facts in their own words (issue 38): no Korean lesson
// sentence may come close to one of the article's sentences (src/lessons/closeness.h), and a
// sentence copied or lightly reworded from the article fails the same measure.
#include <catch2/catch.hpp>

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/read_file.h"
#include "lessons/closeness.h"

using namespace attnsim;
using namespace attnsim::lessons;

namespace {

const ArticleGrams& article() {
  static const ArticleGrams a = parse_article_grams(
      read_text_file(std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/article_3grams.txt", 1 << 22));
  return a;
}

// Too close: at or above the limit, or, for a long sentence, half of it from one sentence.
bool too_close(const std::string& sentence) {
  const auto g = sentence_grams(sentence);
  if (g.size() < kClosenessMinGrams) return false;
  const double c = closeness(g, article());
  return c >= kClosenessLimit || (g.size() >= kClosenessLongGrams && c >= kClosenessLongLimit);
}

// Every Korean string of a lesson file (title, summary, short, text, task and quiz texts,
// options): a table's "ko" key.
void korean_texts(const toml::node& n, std::vector<std::string>& out) {
  if (const auto* t = n.as_table()) {
    for (const auto& [k, v] : *t) {
      if (k == "ko" && v.is_string()) out.push_back(v.as_string()->get());
      else korean_texts(v, out);
    }
  } else if (const auto* a = n.as_array()) {
    for (const auto& v : *a) korean_texts(v, out);
  }
}

}  // namespace

TEST_CASE("no Korean lesson sentence is close to a sentence of the article", "[lessons][closeness]") {
  REQUIRE(article().sentences.size() > 100);
  size_t measured = 0;
  std::vector<std::string> close;
  for (const auto& e : std::filesystem::directory_iterator(std::string(ATTNSIM_SOURCE_DIR) + "/lessons")) {
    if (e.path().extension() != ".toml") continue;
    std::vector<std::string> texts;
    korean_texts(toml::parse_file(e.path().string()), texts);
    for (const auto& t : texts)
      for (const auto& s : split_sentences(unmark(t))) {
        if (sentence_grams(s).size() >= kClosenessMinGrams) ++measured;
        if (too_close(s))
          close.push_back(e.path().filename().string() + ": " + s + " (" +
                          std::to_string(closeness(sentence_grams(s), article())) + ")");
      }
  }
  for (const auto& c : close) UNSCOPED_INFO(c);
  CHECK(close.empty());
  CHECK(measured > 600);  // the walk reached the lessons' prose
}

TEST_CASE("closeness: a copied or lightly reworded article sentence fails, a sentence in other words passes",
          "[lessons][closeness]") {
  // One of the article's sentences, quoted here only to test the measure; and the same fact
  // in the project's words (lesson 02's scores-grow / head-dim steps).
  const std::string copied = "헤드 수는 공짜로 늘릴 수 있는 값이며, 늘릴 때 잃는 것은 연산량이 아니라 헤드당 차원이다.";
  CHECK(closeness(sentence_grams(copied), article()) == 1.0);  // tools/article_fingerprint.py agrees
  CHECK(too_close(copied));
  CHECK(too_close("헤드 수는 공짜로 늘릴 수 있는 값이고, 늘리면 잃는 건 연산량이 아니라 헤드당 차원이다."));   // endings
  CHECK(too_close("늘릴 때 잃는 것은 연산량이 아니라 헤드당 차원이며, 헤드 수는 공짜로 늘릴 수 있다."));       // clauses swapped
  CHECK(too_close("헤드 수는 거의 공짜로 늘릴 수 있고, 그 대가는 연산량이 아니라 헤드마다의 차원이다."));   // words swapped
  CHECK_FALSE(too_close("헤드를 늘려도 곱셈은 그대로이고, 줄어드는 것은 헤드 하나의 폭이다."));
  // A formula is a fact, not wording: the cache formula matches the article's, and is not measured.
  CHECK(sentence_grams("크기 = 배치 × 레이어 × 2 × 헤드 × 길이 × d_k × 바이트.").empty());
  // Marks: a filled figure is '#', a quotation and a constant are their text.
  CHECK(unmark("h {value:config.heads|,}개, {quote:6.4GB}, {math:4}·d²") == "h #개, 6.4GB, 4·d²");
  CHECK(split_sentences("첫 문장이다. 둘째? 셋째!\n넷째 (d = 1.5)") ==
        std::vector<std::string>{"첫 문장이다.", " 둘째?", " 셋째!", "넷째 (d = 1.5)"});
  CHECK_THROWS(parse_article_grams("12345678 xyz\n"));
}
