// attnsim-cli's figure exports (slides, figure, animate): the app's decks and figures with no
// GUI binary and no display, parsed by the app's own option parser.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "helpers.h"

using attnsim::test::run_cli;
namespace fs = std::filesystem;

static fs::path fresh(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("attnsim-cli-export-" + name);
  fs::remove_all(p);
  return p;
}

static std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_CASE("cli: slides writes a lesson's deck as SVG with real text, like attnsim --export-slides") {
  const fs::path dir = fresh("slides");
  const auto r = run_cli("slides " + dir.string() + " --lesson lessons/01-one-budget.toml --format svg --lang en");
  REQUIRE(r.code == 0);
  CHECK(fs::exists(dir / "00-title.svg"));
  CHECK(fs::exists(dir / "index.html"));
  CHECK(slurp(dir / "index.md").find("](") != std::string::npos);
  CHECK(slurp(dir / "00-title.svg").find("<text") != std::string::npos);
  // the folder is now full: refused without --force, and left as it was
  const auto again = run_cli("slides " + dir.string() + " --lesson lessons/01-one-budget.toml");
  CHECK(again.code == 2);
  CHECK(fs::exists(dir / "00-title.svg"));
  fs::remove_all(dir);
}

TEST_CASE("cli: figure draws one step as a PNG slide; animate writes a GIF; bad options are one line") {
  const fs::path png = fresh("alpha.png"), gif = fresh("heads.gif");
  const auto f = run_cli("figure " + png.string() + " --scenario default --step alpha");
  REQUIRE(f.code == 0);
  std::ifstream in(png, std::ios::binary);
  char sig[8] = {};
  in.read(sig, 8);
  CHECK(std::string(sig + 1, 3) == "PNG");
  const auto a = run_cli("animate " + gif.string() + " --from q_view --to q_heads --fps 4 --seconds 1");
  REQUIRE(a.code == 0);
  CHECK(slurp(gif).rfind("GIF89a", 0) == 0);
  const auto window = run_cli("figure " + fresh("x.svg").string() + " --bench-frames 3");
  CHECK(window.code == 2);
  CHECK(window.output.find("the window's") != std::string::npos);
  const auto unknown = run_cli("slides " + fresh("y").string() + " --bogus");
  CHECK(unknown.code == 2);
  CHECK(unknown.output.find("unknown argument '--bogus'") != std::string::npos);
  CHECK_FALSE(fs::exists(fresh("y")));
  fs::remove_all(png);
  fs::remove_all(gif);
}
