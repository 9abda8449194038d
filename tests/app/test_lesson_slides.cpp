// Lesson slides, headless: attnsim --lesson FILE --export-slides DIR writes a title page and one
// PNG per lesson step (not blank, 16:9, twice the size at --scale 2) and DIR/index.md listing
// them in order, and leaves the learner's progress file alone. (Slides are figures drawn by
// Cairo: no window is opened; the test still runs under xvfb-run like the other app tests.)
#include <catch2/catch.hpp>
#include <stb/stb_image.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "lessons/lesson.h"
#include "lessons/markup.h"

namespace fs = std::filesystem;

namespace {

const std::string kApp = ATTNSIM_APP;
const std::string kSource = ATTNSIM_SOURCE_DIR;
const std::string kOut = ATTNSIM_TEST_OUT;

struct Image {
  int w = 0, h = 0;
  std::set<uint32_t> colours;  // distinct colours on a 4-pixel grid
};

Image load(const std::string& path) {
  Image img;
  int n = 0;
  unsigned char* data = stbi_load(path.c_str(), &img.w, &img.h, &n, 4);
  REQUIRE(data != nullptr);
  for (int y = 0; y < img.h; y += 4)
    for (int x = 0; x < img.w; x += 4) {
      const unsigned char* p = &data[(static_cast<size_t>(y) * img.w + x) * 4];
      img.colours.insert(static_cast<uint32_t>(p[0] << 16 | p[1] << 8 | p[2]));
    }
  stbi_image_free(data);
  return img;
}

std::vector<std::string> pngs(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".png") files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

int export_slides(const std::string& lesson, const std::string& dir, const std::string& extra) {
  fs::remove_all(dir);
  const std::string cmd = "XDG_DATA_HOME=" + kOut + "/xdg " + kApp + " --lesson " + lesson +
                          " --export-slides " + dir + " " + extra + " > /dev/null";
  return std::system(cmd.c_str());
}

}  // namespace

TEST_CASE("a lesson exports one non-blank slide per step, with index.md in order") {
  const std::string lesson = kSource + "/lessons/05-masks.toml";
  const auto loaded = attnsim::lessons::load_lesson(lesson);
  REQUIRE(loaded.lesson);
  const auto& steps = loaded.lesson->steps;
  const std::string dir = kOut + "/masks-ko";
  fs::remove_all(kOut + "/xdg");
  REQUIRE(export_slides(lesson, dir, "--lang ko") == 0);
  auto files = pngs(dir);
  REQUIRE(files.size() == steps.size() + 1);
  CHECK(files.front() == "00-title.png");
  files.erase(files.begin());
  std::ifstream in(dir + "/index.md");
  std::stringstream index;
  index << in.rdbuf();
  size_t last = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    char name[160];
    std::snprintf(name, sizeof name, "%02zu-%s.png", i + 1, steps[i].id.c_str());
    CHECK(files[i] == name);
    const size_t at = index.str().find(std::string("](") + name + ")");
    CHECK(at != std::string::npos);
    CHECK(at >= last);  // listed in lesson order
    last = at;
    // The index is plain text: a quoted figure keeps its text, loses its mark.
    const std::string title = attnsim::lessons::plain_text(attnsim::lessons::parse_markup(steps[i].title.ko));
    CHECK(index.str().find(title) != std::string::npos);
    const Image img = load(dir + "/" + name);
    CHECK(img.w == 1280);
    CHECK(img.h == 720);
    CHECK(img.colours.size() > 150);  // the view, the title and the text: far from blank
  }
  // Exporting slides is not studying: no progress file appears.
  CHECK_FALSE(fs::exists(kOut + "/xdg/attnsim/progress.json"));
}

TEST_CASE("slides at --scale 2 are re-rendered at twice the size, in English too") {
  const std::string lesson = kSource + "/lessons/01-one-budget.toml";
  const auto loaded = attnsim::lessons::load_lesson(lesson);
  REQUIRE(loaded.lesson);
  const std::string dir = kOut + "/budget-en-2x";
  REQUIRE(export_slides(lesson, dir, "--scale 2 --lang en") == 0);
  const auto files = pngs(dir);
  REQUIRE(files.size() == loaded.lesson->steps.size() + 1);  // the title page and every step
  for (const auto& f : files) {
    const Image img = load(dir + "/" + f);
    CHECK(img.w == 2560);
    CHECK(img.h == 1440);
    CHECK(img.colours.size() > 150);
  }
}

TEST_CASE("a broken lesson file gives its location and exit code 2, no slides") {
  const std::string dir = kOut + "/broken";
  CHECK(export_slides(kSource + "/tests/lessons/unknown-step.toml", dir, "") == 2 << 8);
  CHECK((!fs::exists(dir) || pngs(dir).empty()));
}
