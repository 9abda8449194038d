// What a lesson step shows and when: highlight (head, token, bar) and sequence (loaded, and
// refused by the checker where the step's model has no such head, token or word), and the figures filled
// later, one text at a time (value_fill.h), as fill_values fills them at once.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>

#include "lessons/lesson.h"
#include "lessons/value_fill.h"

using namespace attnsim::lessons;

namespace {

// A lesson on the shipped induction model (2 layers, 4 heads) with one model step.
std::string model_lesson(const std::string& step_fields) {
  return R"(format = 2
id = "t"
order = 1
title = { ko = "제목", en = "Title" }
summary = { ko = "요약", en = "Summary" }
[scenario]
preset = "default"
[[step]]
id = "s"
title = { ko = "헤드", en = "A head" }
panel = "model"
)" + step_fields + R"(
text.ko = "층 {value:model.layers}개"
text.en = "{value:model.layers} layers"
)";
}

std::vector<Diagnostic> check(const std::string& text) {
  LoadResult r = load_lesson_text(text, "t.toml");
  REQUIRE(r.lesson);
  std::vector<Diagnostic> out;
  check_lesson(*r.lesson, out);
  return out;
}

bool mentions(const std::vector<Diagnostic>& ds, const std::string& what) {
  for (const auto& d : ds)
    if (d.message.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("highlight.head loads as layer.head, one or several", "[lessons][shown]") {
  LoadResult r = load_lesson_text(model_lesson(R"(highlight = { head = "1.3,0.2" })"), "t.toml");
  REQUIRE(r.diagnostics.empty());
  const auto& heads = r.lesson->steps[0].highlight_heads;
  REQUIRE(heads.size() == 2);
  CHECK(heads[0].layer == 1);
  CHECK(heads[0].head == 3);
  CHECK(heads[1].layer == 0);
  CHECK(heads[1].head == 2);
  CHECK(r.lesson->steps[0].highlight_where.line == 12);

  for (const char* bad : {"2", "1.x", "1.2,", ".1", "1.2.3", "-1.2", ""}) {
    CAPTURE(bad);
    LoadResult b = load_lesson_text(model_lesson(std::string("highlight = { head = \"") + bad + "\" }"), "t.toml");
    CHECK(!b.lesson);
    CHECK(mentions(b.diagnostics, "write layer.head"));
  }
  LoadResult unknown = load_lesson_text(model_lesson(R"(highlight = { row = 3 })"), "t.toml");
  CHECK(mentions(unknown.diagnostics, "unknown key 'row'"));
  CHECK(mentions(load_lesson_text(model_lesson(R"(highlight = { bar = 3 })"), "t.toml").diagnostics, "must be a string"));
}

TEST_CASE("lesson check proves the highlighted head exists in the step's model", "[lessons][shown]") {
  CHECK(check(model_lesson(R"(highlight = { head = "1.3" })")).empty());
  const auto outside = check(model_lesson(R"(highlight = { head = "2.0" })"));
  CHECK(mentions(outside, "highlight.head 2.0 does not exist in induction (layers 0 to 1, heads 0 to 3)"));
  CHECK(mentions(check(model_lesson(R"(highlight = { head = "0.4" })")), "highlight.head 0.4 does not exist"));
  // The grid is not on screen when the step opens another tab.
  CHECK(mentions(check(model_lesson("highlight = { head = \"0.1\" }\naction = \"open-lens\"")), "opens another tab"));
  // Another panel has no head grid.
  std::string tensor = model_lesson(R"(highlight = { head = "0.1" })");
  tensor.replace(tensor.find("panel = \"model\""), 15, "panel = \"tensor\"");
  tensor.replace(tensor.find("{value:model.layers}개"), 23, "글");
  tensor.replace(tensor.find("{value:model.layers} layers"), 27, "text");
  CHECK(mentions(check(tensor), "is for the trained model's panel"));
}

// The same step on the shipped language model (its tokenizer reads words).
std::string language_lesson(const std::string& step_fields) {
  std::string text = model_lesson(step_fields + "\n[[step.claim]]\nquantity = \"model.params\"\n"
                                                "model = { checkpoint = \"wordnet-lm-s1\" }\nat_least = 1");
  // the claim's table must come after the texts: move them up
  const size_t claim = text.find("[[step.claim]]"), texts = text.find("text.ko");
  const std::string claim_part = text.substr(claim, texts - claim);
  text.erase(claim, texts - claim);
  return text + claim_part;
}

TEST_CASE("highlight.token and highlight.bar load; an empty highlight is refused", "[lessons][shown]") {
  LoadResult r = load_lesson_text(model_lesson(R"(highlight = { head = "1.3", token = "fish", bar = "mat" })"), "t.toml");
  REQUIRE(r.diagnostics.empty());
  CHECK(r.lesson->steps[0].highlight_token == "fish");
  CHECK(r.lesson->steps[0].highlight_bar == "mat");
  CHECK(mentions(load_lesson_text(model_lesson("highlight = {}"), "t.toml").diagnostics, "give head, token or bar"));
  CHECK(mentions(load_lesson_text(model_lesson(R"(highlight = { token = "" })"), "t.toml").diagnostics, "1 to 64 bytes"));
}

TEST_CASE("lesson check proves a highlighted token is in the step's sequence and a bar in the vocabulary", "[lessons][shown]") {
  const std::string sentence = "sequence = \"the man ate the fish .\"\n";
  CHECK(check(language_lesson(sentence + R"(highlight = { token = "fish" })")).empty());
  CHECK(mentions(check(language_lesson(sentence + R"(highlight = { token = "cow" })")),
                 "highlight.token \"cow\" is no token of the step's sequence"));
  CHECK(mentions(check(language_lesson(R"(highlight = { token = "fish" })")), "needs the step's own sequence"));
  CHECK(mentions(check(language_lesson(sentence + "highlight = { token = \"fish\" }\naction = \"open-lens\"")),
                 "frames a row of the head grid"));
  CHECK(check(language_lesson(R"(highlight = { bar = "the" })" "\naction = \"open-sampling\"")).empty());
  CHECK(mentions(check(language_lesson(R"(highlight = { bar = "the" })")), "give the step action = \"open-sampling\""));
  CHECK(mentions(check(language_lesson(R"(highlight = { bar = "zqxjzqxj" })" "\naction = \"open-sampling\"")),
                 "highlight.bar \"zqxjzqxj\" is no token of wordnet-lm-s1's vocabulary"));
  // The toy model's tokens are letters.
  CHECK(check(model_lesson("highlight = { bar = \"b\" }\naction = \"open-sampling\"")).empty());
}

TEST_CASE("a step's sequence: the whole pass's, or words a language model reads", "[lessons][shown]") {
  CHECK(check(model_lesson(R"(sequence = "whole-pass")")).empty());
  // The induction model has no tokenizer: words are refused, with what to write instead.
  CHECK(mentions(check(model_lesson(R"(sequence = "the cat sat")")), "reads no words (no tokenizer.json)"));
  LoadResult empty = load_lesson_text(model_lesson(R"(sequence = "")"), "t.toml");
  CHECK(mentions(empty.diagnostics, "empty sequence"));
}

TEST_CASE("a title or summary may not state a trained model's figure", "[lessons][shown]") {
  std::string text = model_lesson("");
  text.replace(text.find("Summary"), 7, "{value:model.layers} layers");
  text.replace(text.find("요약"), 6, "층 {value:model.layers}개");
  CHECK(mentions(check(text), "the lesson's summary: {value:model.layers} reads a trained model"));
}

TEST_CASE("Fill::Later shows the step figures pending; ValueFill fills them as fill_values does", "[lessons][shown]") {
  const std::string path = std::string(ATTNSIM_SOURCE_DIR) + "/lessons/04-shapes.toml";
  LoadResult now = load_lesson(path);
  LoadResult later = load_lesson(path, Fill::Later);
  REQUIRE(now.lesson);
  REQUIRE(later.lesson);
  Lesson& shown = *later.lesson;
  // The title is filled at once (the lesson list shows it); a step's text waits.
  CHECK(shown.title.en == now.lesson->title.en);
  CHECK(shown.steps[0].text.en.find(kPendingFigure) != std::string::npos);
  CHECK(shown.steps[0].text.en != now.lesson->steps[0].text.en);

  // The wanted step first, then on through the lesson; every text once.
  const int want = 2;
  ValueFill fill(shown);
  const std::vector<int> steps = text_steps(shown);
  std::optional<FilledText> first = fill.next(want);
  REQUIRE(first);
  CHECK(first->step == want);
  put_filled(shown, *first);
  int count = 1;
  while (auto t = fill.next(want)) {
    CHECK(steps[t->index] == t->step);
    put_filled(shown, *t);
    ++count;
  }
  CHECK(count == static_cast<int>(steps.size()));
  CHECK(fill.problems().empty());
  for (size_t i = 0; i < shown.steps.size(); ++i) {
    CAPTURE(i);
    CHECK(shown.steps[i].text.en == now.lesson->steps[i].text.en);
    CHECK(shown.steps[i].text.ko == now.lesson->steps[i].text.ko);
    CHECK(shown.steps[i].title.ko == now.lesson->steps[i].title.ko);
  }

  // A stop is seen before each value: only texts without one come back, and the first text
  // with one ends the filling.
  std::atomic<bool> stop{true};
  ValueFill stopped(*later.lesson);
  int returned = 0;
  while (auto t = stopped.next(0, &stop)) {
    CHECK(t->text.en_src.text.find("{value:") == std::string::npos);
    ++returned;
  }
  CHECK(returned < count);
}

TEST_CASE("the lesson list computes no step figure: every title and summary whole, the steps pending", "[lessons][shown]") {
  std::vector<Diagnostic> problems;
  const std::vector<Lesson> all = load_lesson_dir(std::string(ATTNSIM_SOURCE_DIR) + "/lessons", &problems, Fill::Later);
  CHECK(problems.empty());
  REQUIRE(all.size() == 18);
  int pending = 0;
  for (const Lesson& l : all) {
    CAPTURE(l.id);
    CHECK(l.title.en.find(kPendingFigure) == std::string::npos);
    CHECK(l.summary.ko.find(kPendingFigure) == std::string::npos);
    CHECK(l.title.en.find("{value:") == std::string::npos);
    for (const LessonStep& s : l.steps) pending += s.text.en.find(kPendingFigure) != std::string::npos;
  }
  CHECK(pending > 50);  // nearly every step states a figure, none of them computed yet
}
