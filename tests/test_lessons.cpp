// Lessons: every lesson in lessons/ agrees with the engine; broken fixtures give their
// message with its location; markup, answers, tasks and progress behave as a learner expects.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "helpers.h"
#include "lessons/lesson.h"
#include "lessons/markup.h"
#include "lessons/player.h"
#include "lessons/progress.h"

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

TEST_CASE("attnsim-cli lesson check passes on lessons/ and exits 2 on a broken lesson", "[lessons][cli]") {
  const auto ok = run_cli("lesson check " + kLessons);
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
  const std::string text = R"(format = 1
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
