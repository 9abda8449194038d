// Lessons: every lesson in lessons/ agrees with the engine; broken fixtures give their
// message with its location; markup, answers, tasks and progress behave as a learner expects.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "helpers.h"
#include "lessons/lesson.h"
#include "lessons/markup.h"
#include "lessons/player.h"
#include "lessons/progress.h"
#include "lessons/prose.h"

using namespace attnsim;
using namespace attnsim::lessons;
using attnsim::test::run_cli;

namespace {

const std::string kLessons = std::string(ATTNSIM_SOURCE_DIR) + "/lessons";
const std::string kFixtures = std::string(ATTNSIM_SOURCE_DIR) + "/tests/lessons";

std::vector<Diagnostic> check_file(const std::string& path) {
  LoadResult r = load_lesson(path);
  if (r.lesson) check_lesson(*r.lesson, r.diagnostics);
  return r.diagnostics;
}

std::string all(const std::vector<Diagnostic>& d) {
  std::string s;
  for (const auto& x : d) s += x.str() + "\n";
  return s;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// "line:column" of a byte offset, columns in code points (as toml++ and the checker count).
std::string line_col(const std::string& text, size_t offset) {
  int line = 1, col = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

// A copy of a shipped lesson with `from` (found after `after`) replaced by `to`; returns the
// copy and sets `at` to where the replacement starts.
std::string mutate(const std::string& text, const std::string& after, const std::string& from,
                   const std::string& to, size_t* at) {
  const size_t start = text.find(after);
  REQUIRE(start != std::string::npos);
  const size_t pos = text.find(from, start);
  REQUIRE(pos != std::string::npos);
  *at = pos;
  return text.substr(0, pos) + to + text.substr(pos + from.size());
}

std::vector<Diagnostic> check_text(const std::string& text, const std::string& path) {
  LoadResult r = load_lesson_text(text, path);
  if (r.lesson) check_lesson(*r.lesson, r.diagnostics);
  return r.diagnostics;
}

}  // namespace

TEST_CASE("every lesson in lessons/ passes lesson check", "[lessons]") {
  const auto files = lesson_files({kLessons});
  REQUIRE(files.size() >= 10);
  std::vector<Lesson> loaded;
  for (const auto& f : files) {
    INFO(f);
    const auto d = check_file(f);
    CHECK(all(d) == "");
    auto r = load_lesson(f);
    if (r.lesson) loaded.push_back(*r.lesson);
  }
  std::vector<Diagnostic> set;
  check_lesson_set(loaded, set);
  CHECK(all(set) == "");
}

// One shipped lesson through the CLI: the whole folder is the test above in this process, and
// tools/test.sh's lessons stage runs `lesson check lessons` itself (three minutes each).
TEST_CASE("attnsim-cli lesson check passes on a shipped lesson and exits 2 on a broken lesson", "[lessons][cli]") {
  const auto ok = run_cli("lesson check " + kLessons + "/01-one-budget.toml");
  INFO(ok.output);
  CHECK(ok.code == 0);
  CHECK(ok.output.find("all agree with the engine") != std::string::npos);
  const auto bad = run_cli("lesson check " + kFixtures + "/wrong-answer.toml");
  CHECK(bad.code == 2);
  CHECK(bad.output.find("wrong-answer.toml:25:10: step 1 (\"one\") quiz answer 6871947673 disagrees "
                        "with the engine (cost.kv_cache_bytes): the engine gives 2147483648") !=
        std::string::npos);
  const auto missing = run_cli("lesson check /nonexistent/lessons");
  CHECK(missing.code == 2);
  CHECK(missing.output.find("no such file or folder") != std::string::npos);
}

TEST_CASE("the valid fixture passes", "[lessons]") {
  CHECK(all(check_file(kFixtures + "/valid.toml")) == "");
}

TEST_CASE("broken lesson fixtures give their message with file:line:column", "[lessons]") {
  struct Case {
    const char* file;
    const char* expected;  // the whole "file:line:column: message" prefix
  };
  const Case cases[] = {
      {"syntax-error.toml", "syntax-error.toml:5:22: TOML syntax error: "},
      {"unknown-step.toml", "unknown-step.toml:14:9: unknown trace step 'alpah' in step 1 (\"one\")"},
      {"wrong-type.toml", "wrong-type.toml:10:9: 'heads' in the lesson.scenario must be an integer, got a string"},
      {"missing-language.toml",
       "missing-language.toml:13:9: missing language 'en' in step 1 (\"one\").title"},
      {"wrong-answer.toml",
       "wrong-answer.toml:25:10: step 1 (\"one\") quiz answer 6871947673 disagrees with the engine"},
      {"unknown-names.toml", "unknown-names.toml:15:9: unknown panel 'heatmap' in step 1 (\"one\")"},
      {"unknown-names.toml", "unknown-names.toml:16:10: unknown key 'colour' in step 1 (\"one\")"},
      {"unknown-scenario.toml", "unknown-scenario.toml:9:10: unknown scenario 'nonsense'"},
      {"unknown-action.toml", "unknown-action.toml:15:10: unknown action 'press-all' in step 1 (\"one\")"},
      {"skipped-step.toml",
       "skipped-step.toml:11:1: step 1 (\"one\"): it shows trace step 'mask', which is skipped"},
  };
  for (const auto& c : cases) {
    const auto d = check_file(kFixtures + "/" + c.file);
    const std::string text = all(d);
    INFO(text);
    CHECK(text.find(kFixtures + "/" + c.expected) != std::string::npos);
  }
}

TEST_CASE("a claim the engine disagrees with is reported where it stands", "[lessons]") {
  const std::string text = R"(format = 2
id = "t"
order = 1
title = { ko = "가", en = "a" }
summary = { ko = "가", en = "a" }
[scenario]
preset = "mask-two-fills"
[[step]]
id = "s"
title = { ko = "가", en = "a" }
text = { ko = "가", en = "a" }
[[step.claim]]
quantity = "alpha.nan_rows"
equals = 8
)";
  auto r = load_lesson_text(text, "claim.toml");
  REQUIRE(r.lesson);
  check_lesson(*r.lesson, r.diagnostics);
  // The article's claim (two fills give NaN) is false: the engine finds no NaN row.
  CHECK(all(r.diagnostics) ==
        "claim.toml:12:1: step 1 (\"s\") claim: alpha.nan_rows: the engine gives 0, the lesson says 8\n");
}

TEST_CASE("markup: bold, code, lists and paragraphs", "[lessons]") {
  const auto b = parse_markup("A **bold** and `code` line\ncontinues.\n\n- one\n- two **x**\n");
  REQUIRE(b.size() == 3);
  CHECK_FALSE(b[0].list_item);
  REQUIRE(b[0].spans.size() == 5);
  CHECK(b[0].spans[1].text == "bold");
  CHECK(b[0].spans[1].bold);
  CHECK(b[0].spans[3].code);
  CHECK(b[0].spans[4].text == " line continues.");
  CHECK(b[1].list_item);
  CHECK(b[2].spans[1].bold);
  CHECK(first_paragraph("**Hi** there\n\nnext") == "Hi there");
}

TEST_CASE("a learner's number is read with separators and units", "[lessons]") {
  CHECK(parse_answer("2,147,483,648") == 2147483648.0);
  CHECK(parse_answer(" 2 147 483 648 B") == 2147483648.0);
  CHECK(parse_answer("2 GiB") == 2147483648.0);
  CHECK(parse_answer("512MiB") == 536870912.0);
  CHECK(parse_answer("6.4e9") == 6.4e9);
  CHECK_FALSE(parse_answer("lots"));
  CHECK_FALSE(parse_answer("2 parsecs"));
  Quiz q;
  q.kind = QuizKind::Number;
  q.answer = 2147483648.0;
  CHECK(check_number(q, "2 GiB").right);
  CHECK_FALSE(check_number(q, "6.4 GB").right);
  CHECK_FALSE(check_number(q, "?").readable);
  q.tolerance = 0.01;
  CHECK(check_number(q, "2.15 GB").right);
}

TEST_CASE("the player walks a lesson, checks its task goal and records progress", "[lessons]") {
  auto r = load_lesson(kLessons + "/01-one-budget.toml");
  REQUIRE(r.lesson);
  Player p;
  p.open(*r.lesson, 99);
  CHECK(p.step_index() == p.step_count() - 1);  // clamped
  p.go(0);
  CHECK_FALSE(p.previous());
  REQUIRE(p.next());
  CHECK(p.step().id == "one-head");
  CHECK(p.state().config.heads == 1);  // the step's override
  REQUIRE(p.step().task);
  LiveState live;
  live.config = p.state().config;
  live.preset = "default";
  std::string why;
  CHECK_FALSE(goal_reached(*p.step().task, live, &why));
  CHECK(why == "heads is 1, the task asks for 4");
  live.config.heads = 4;
  CHECK(goal_reached(*p.step().task, live, &why));
  Evaluator eval;
  for (const auto& c : p.step().task->claims) CHECK(eval.holds(c, settings_of(live), &why));

  Progress progress;
  p.record(progress);
  CHECK(progress.last_lesson == "one-budget");
  CHECK(progress.lessons["one-budget"].step == 1);
  CHECK(progress.fraction("one-budget", 3) == Approx(1.0 / 3));
}

TEST_CASE("progress is saved under XDG_DATA_HOME and resumed", "[lessons]") {
  const auto dir = std::filesystem::temp_directory_path() / ("attnsim-progress-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  setenv("XDG_DATA_HOME", dir.c_str(), 1);
  const std::string path = default_progress_path();
  CHECK(path == (dir / "attnsim" / "progress.json").string());
  Progress p;
  p.last_lesson = "masks";
  p.lessons["masks"].step = 4;
  p.lessons["masks"].seen = {"broadcast", "check-zeros"};
  p.lessons["masks"].quizzes_right = {"or-vs-two-fills"};
  std::string error;
  REQUIRE(save_progress(p, path, &error));
  const Progress back = load_progress(path);
  CHECK(back.last_lesson == "masks");
  CHECK(back.lessons.at("masks").step == 4);
  CHECK(back.lessons.at("masks").seen.size() == 2);
  CHECK(back.lessons.at("masks").quizzes_right.count("or-vs-two-fills") == 1);
  {
    std::ofstream(path) << "{ not json";
  }
  std::string warning;
  CHECK(load_progress(path, &warning).lessons.empty());
  CHECK(warning.find("ignoring unreadable progress file") != std::string::npos);
  std::filesystem::remove_all(dir);
  unsetenv("XDG_DATA_HOME");
}

// [SECTION] Mutations: a shipped lesson changed in one place fails with file:line:column -------

TEST_CASE("mutation: a flipped choice answer fails at the claim it makes false", "[lessons][mutation]") {
  const std::string text = read_file(kLessons + "/05-masks.toml");
  size_t at = 0;
  const std::string bad = mutate(text, "id = \"or-vs-two-fills\"", "answer = 2", "answer = 1", &at);
  const std::string d = all(check_text(bad, "flipped.toml"));
  INFO(d);
  // Option 1 ("NaN rows appear") is now the answer: its claim, the first option claim of the
  // quiz, is refuted; option 2, still true, is reported as a second true option.
  const size_t claim = bad.find("[[step.quiz.option.claim]]", at);
  CHECK(d.find("flipped.toml:" + line_col(bad, claim) +
               ": step 4 (\"or-vs-two-fills\") quiz option 1 (the answer): alpha.nan_rows: the "
               "engine gives 0, the lesson says at least 1") != std::string::npos);
  const size_t second = bad.find("[[step.quiz.option]]", bad.find("[[step.quiz.option]]", at) + 1);
  CHECK(d.find("flipped.toml:" + line_col(bad, second) +
               ": step 4 (\"or-vs-two-fills\") quiz option 2 is not the answer, yet the engine "
               "confirms every claim it makes") != std::string::npos);
}

TEST_CASE("mutation: a number typed into the prose fails where it stands", "[lessons][mutation]") {
  const std::string text = read_file(kLessons + "/05-masks.toml");
  size_t at = 0;
  const std::string bad = mutate(text, "text.en = \"\"\"\nYou can check a mask", "{value:zeros}", "999,999", &at);
  const std::string d = all(check_text(bad, "number.toml"));
  INFO(d);
  CHECK(d.find("number.toml:" + line_col(bad, at) +
               ": step 2 (\"check-zeros\").text.en: bare number '999,999': write {value:...}") !=
        std::string::npos);
  // The same figure typed correctly is still a bare number: the rule is the mark, not the value.
  const std::string typed = mutate(text, "text.en = \"\"\"\nYou can check a mask", "{value:zeros}", "0.0", &at);
  CHECK(all(check_text(typed, "typed.toml")).find("typed.toml:" + line_col(typed, at) + ": step 2") !=
        std::string::npos);
}

TEST_CASE("mutation: ko and en stating different figures fails at the en text", "[lessons][mutation]") {
  const std::string text = read_file(kLessons + "/05-masks.toml");
  size_t at = 0;
  const std::string bad = mutate(text, "This run inverts", "{value:inv-nan}", "{value:inv-out-nan}", &at);
  const std::string d = all(check_text(bad, "langs.toml"));
  INFO(d);
  const std::string opening = "text.en = \"\"\"\n`masked_fill` fills the positions";
  REQUIRE(bad.find(opening) != std::string::npos);
  const size_t en = bad.find(opening) + std::string("text.en = \"\"\"\n").size();
  CHECK(d.find("langs.toml:" + line_col(bad, en) +
               ": step 3 (\"direction-bug\").text: ko and en state different figures (only in ko: 8;") !=
        std::string::npos);
}

TEST_CASE("mutation: a claim's value changed fails at that claim", "[lessons][mutation]") {
  const std::string text = read_file(kLessons + "/05-masks.toml");
  size_t at = 0;
  const std::string bad = mutate(text, "id = \"inv-nan\"", "equals = 8", "equals = 9", &at);
  const std::string d = all(check_text(bad, "claim-value.toml"));
  INFO(d);
  const size_t header = bad.rfind("[[step.claim]]", at);
  CHECK(d.find("claim-value.toml:" + line_col(bad, header) +
               ": step 3 (\"direction-bug\") claim: alpha.nan_rows (the last query row of every head "
               "and batch element hides every key): the engine gives 8, the lesson says 9") != std::string::npos);
}

TEST_CASE("mutation: attnsim-cli lesson check exits 2 on a mutated copy and names the place", "[lessons][mutation][cli]") {
  const std::string text = read_file(kLessons + "/05-masks.toml");
  size_t at = 0;
  const std::string bad = mutate(text, "id = \"or-vs-two-fills\"", "answer = 2", "answer = 3", &at);
  const auto path = std::filesystem::temp_directory_path() / ("attnsim-mutant-" + std::to_string(::getpid()) + ".toml");
  { std::ofstream(path) << bad; }
  const auto r = run_cli("lesson check " + path.string());
  std::filesystem::remove(path);
  INFO(r.output);
  CHECK(r.code == 2);
  const size_t claim = bad.find("[[step.quiz.option.claim]]", bad.find("text = { ko = \"두 번째 마스크가"));
  CHECK(r.output.find(path.string() + ":" + line_col(bad, claim) +
                      ": step 4 (\"or-vs-two-fills\") quiz option 3 (the answer): alpha.hidden_nonzero") !=
        std::string::npos);
}

// [SECTION] The marks of prose.h ------------------------------------------------------------

TEST_CASE("prose: what counts as a bare number", "[lessons]") {
  auto tokens = [](const std::string& t) {
    std::string s;
    for (const auto& n : bare_numbers(t)) s += n.token + ";";
    return s;
  };
  CHECK(tokens("262,144 bytes, 6.4GB, 1e-9, 50%, 16칸") == "262,144;6.4;1e-9;50;16;");
  CHECK(tokens("float32 W_O fp16 GPT-3 d_k") == "");
  CHECK(tokens("sums to 1, exactly 0, index 0, 1%") == "1;");
  CHECK(tokens("(B, h, T, d_k) and (1, 4, 6, 6)") == "4;6;6;");
  CHECK(tokens("{value:trace.alpha.shape} {quote:6.4GB} {math:4}·d²") == "");
  std::vector<std::pair<size_t, std::string>> problems;
  const auto marks = find_marks("a {value:x|MiB} b {quote:7} {vlaue:y} {math:2", &problems);
  REQUIRE(marks.size() == 2);
  CHECK(marks[0].body == "x|MiB");
  CHECK(marks[1].kind == Mark::Kind::Quote);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].second.find("unknown mark '{vlaue:'") == 0);
  CHECK(problems[1].second.find("unterminated {math:") == 0);
}

TEST_CASE("prose: figures are formatted as a reader expects", "[lessons]") {
  CHECK(format_for_prose(Value{4096.0}) == "4096");
  CHECK(format_for_prose(Value{262144.0}) == "262,144");
  CHECK(format_for_prose(Value{1.0 / 6}) == "0.167");
  CHECK(format_for_prose(Value{1e-7}) == "1e-7");
  CHECK(format_for_prose(Value{std::vector<int64_t>{1, 4, 6, 6}}) == "(1, 4, 6, 6)");
  CHECK(format_for_prose(Value{2147483648.0}, "GiB") == "2 GiB");
  CHECK(format_for_prose(Value{4194304.0}, "MiB") == "4 MiB");
  CHECK(format_for_prose(Value{0.7312}, ".2f") == "0.73");
  CHECK(format_for_prose(Value{0.25}, "%") == "25%");
  CHECK(format_for_prose(Value{1048576.0}, "raw") == "1048576");
}

TEST_CASE("prose: placeholders are filled at load time and problems point at them", "[lessons]") {
  const std::string text = R"(format = 2
id = "t"
order = 1
title = { ko = "가", en = "a" }
summary = { ko = "가", en = "a" }
[scenario]
preset = "default"
[[step]]
id = "s"
title = { ko = "가", en = "a" }
text.ko = """
모양 {value:trace.alpha.shape}, 헤드 {value:config.heads}, {value:kv|GiB}, {quote:6.4GB}
"""
text.en = """
shape {value:trace.alpha.shape}, {value:config.heads} heads, {value:kv|GiB}, {quote:6.4GB} and {value:nothing}
"""
[[step.claim]]
id = "kv"
quantity = "cost.kv_cache_bytes"
cost = { d_model = 4096, heads = 32, layers = 32, seq = 4096, batch = 1, dtype = "fp16" }
equals = 2147483648
)";
  auto r = load_lesson_text(text, "fill.toml");
  REQUIRE(r.lesson);
  const Text& t = r.lesson->steps[0].text;
  CHECK(t.ko == "모양 (1, 4, 6, 6), 헤드 4, 2 GiB, {quote:6.4GB}\n");
  CHECK(t.en.find("shape (1, 4, 6, 6), 4 heads, 2 GiB, {quote:6.4GB} and ?") == 0);
  const auto blocks = parse_markup(t.en);
  REQUIRE(blocks.size() == 1);
  bool quoted = false;
  for (const auto& span : blocks[0].spans) quoted = quoted || (span.quote && span.text == "6.4GB");
  CHECK(quoted);
  check_lesson(*r.lesson, r.diagnostics);
  const std::string d = all(r.diagnostics);
  INFO(d);
  CHECK(d.find("fill.toml:15:96: step 1 (\"s\").text.en: cannot fill {value:nothing}: no claim has the id 'nothing'") !=
        std::string::npos);
  CHECK(d.find("fill.toml:15:1: step 1 (\"s\").text: ko and en state different figures (only in ko: none; only in en: ?)") !=
        std::string::npos);
}
