// A lesson step in the window, headless at 1280x720: what its text names is on screen (the
// head its highlight names, scrolled into view inside the model panel) and its figures are
// filled before the picture (--at N --export waits for them).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

const std::string kApp = ATTNSIM_APP;
const std::string kOut = ATTNSIM_TEST_OUT;
const std::string kSource = ATTNSIM_SOURCE_DIR;

bool inside(const nlohmann::json& r, const nlohmann::json& box) {
  const double x = r[0], y = r[1], w = r[2], h = r[3];
  const double bx = box[0], by = box[1], bw = box[2], bh = box[3];
  return x >= bx && y >= by && x + w <= bx + bw && y + h <= by + bh;
}

}  // namespace

TEST_CASE("a lesson step's highlighted head is outlined on screen at 1280x720", "[lesson][window]") {
  const std::string png = kOut + "/highlight.png", geometry = kOut + "/highlight.json";
  std::remove(png.c_str());
  const std::string cmd = "XDG_DATA_HOME=" + kOut + "/xdg-highlight XDG_CACHE_HOME=" + kOut + "/xdg-highlight " + kApp +
                          " --lesson " + kSource + "/tests/lessons/highlight-head.toml --at 1 --window 1280x720 --export " +
                          png + " --geometry " + geometry + " > /dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream in(geometry);
  const nlohmann::json g = nlohmann::json::parse(in);
  REQUIRE(g.contains("model_cells"));
  const nlohmann::json window = nlohmann::json::array({0, 0, 1280, 720});
  const nlohmann::json& panel = g.at("model_panel");
  CHECK(inside(panel, window));
  bool found = false;
  for (const auto& c : g.at("model_cells"))
    if (c.at("layer") == 1 && c.at("head") == 3) {
      found = true;
      CHECK(inside(c.at("rect"), panel));  // scrolled into view, not below the fold
    }
  CHECK(found);
  // The lesson beside the panel, on screen too.
  CHECK(inside(g.at("panels").at("lesson"), window));
}
