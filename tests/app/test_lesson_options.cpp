// attnsim --lesson FILE --at N: the lesson's step N, as the page's #lesson=ID&at=N. A step that
// is not a number from 1 is one clear error (the caller prints it and exits 2).
#include <catch2/catch.hpp>

#include "engine/error.h"
#include "views/options.h"

using namespace attnsim::app;

TEST_CASE("a lesson opens at step N with --at N; anything else is refused with one message", "[lesson][options]") {
  const Options o = parse_options({"--lesson", "lessons/18-heads-in-language.toml", "--at", "3"});
  CHECK(o.lesson_at == 3);
  CHECK(o.mode == Mode::Window);
  const Options e = parse_options({"--lesson", "l.toml", "--at", "1", "--export", "out.png"});
  CHECK(e.lesson_at == 1);
  CHECK(e.mode == Mode::Export);
  CHECK(parse_options({"--lesson", "l.toml"}).lesson_at == 0);  // where the learner left it
  const std::string want = "--at takes a step number of the lesson, 1 for its first step, got '";
  for (const char* bad : {"0", "99999999999999999999", "x", "-1", "1.5", "", "2x"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(parse_options({"--lesson", "l.toml", "--at", bad}), want + bad + "'");
  }
  CHECK_THROWS_WITH(parse_options({"--lesson", "l.toml", "--at"}), "--at needs a value");
  CHECK_THROWS_WITH(parse_options({"--at", "2"}), "--at N opens step N of a lesson: give --lesson FILE too");
  CHECK_THROWS_AS(parse_options({"--lesson", "l.toml", "--at", "2", "--export-slides", "d"}), attnsim::Error);
}
