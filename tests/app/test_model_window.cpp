// The model panel in a real window under xvfb-run (needs the shipped checkpoint,
// assets/models/induction, or $ATTNSIM_MODEL):
//   - the exported head grid has a role badge on every cell (the induction badge's orange on
//     the induction heads) and the red ablated mark on exactly the knocked-out cells
//   - a 2x export of the grid is twice the size; the Training tab exports with its plots
//   - a broken checkpoint exits 2 with one line naming model.json, and leaves no PNG
#include <catch2/catch.hpp>
#include <stb/stb_image.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace {

const std::string kApp = ATTNSIM_APP;
const std::string kOut = ATTNSIM_TEST_OUT;

std::string model_dir() {
  const char* env = std::getenv("ATTNSIM_MODEL");
  return env && *env ? env : ATTNSIM_MODEL_DIR;
}

bool have_model() {
  if (std::filesystem::exists(model_dir() + "/model.json")) return true;
  WARN("no checkpoint at " << model_dir() << ": model window checks skipped");
  return false;
}

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> rgba;
  const unsigned char* at(int x, int y) const { return &rgba[(static_cast<size_t>(y) * w + x) * 4]; }
};

Image load(const std::string& path) {
  Image img;
  int n = 0;
  unsigned char* data = stbi_load(path.c_str(), &img.w, &img.h, &n, 4);
  REQUIRE(data != nullptr);
  img.rgba.assign(data, data + static_cast<size_t>(img.w) * img.h * 4);
  stbi_image_free(data);
  return img;
}

// These checks are the toy induction model's (its badges, its phase change): the model scenario
// opens the language model unless ATTNSIM_MODEL names another, so name this one.
int run(const std::string& args) {
  return std::system(("ATTNSIM_MODEL='" + model_dir() + "' " + kApp + " " + args + " > /dev/null").c_str());
}

// panel_model.cpp: the ablated mark IM_COL32(235, 40, 40), the induction badge (255, 150, 20).
// The knocked-out frame and cross: the slides' vermillion 0xD55E00 (model_slides.cpp kKnocked).
bool is_ablated_red(const unsigned char* p) {
  return std::abs(p[0] - 0xD5) < 20 && std::abs(p[1] - 0x5E) < 20 && p[2] < 30;
}
bool is_induction_orange(const unsigned char* p) { return p[0] > 235 && p[1] > 130 && p[1] < 170 && p[2] < 50; }

}  // namespace

TEST_CASE("model-ablate-induction: the head grid has its badges and the ablated cells marked") {
  if (!have_model()) return;
  const std::string png = kOut + "/model-grid.png", geo = kOut + "/model-grid.json";
  REQUIRE(run("--export " + png + " --scenario model-ablate-induction --panel model --geometry " + geo) == 0);
  const Image img = load(png);
  nlohmann::json g;
  std::ifstream(geo) >> g;
  const auto& panel = g["model_panel"];
  const auto& cells = g["model_cells"];
  REQUIRE(cells.size() >= 2);
  REQUIRE(img.w == static_cast<int>(panel[2].get<float>()));
  int ablated = 0, induction = 0;
  for (const auto& c : cells) {
    const float x = c["rect"][0].get<float>() - panel[0].get<float>(), y = c["rect"][1].get<float>() - panel[1].get<float>();
    const float w = c["rect"][2], h = c["rect"][3];
    // The frame: the outermost 2 pixels of the cell, all round (the slide's frame, half of it
    // inside the cell).
    int red = 0, frame = 0;
    for (int py = static_cast<int>(y); py < static_cast<int>(y + h); ++py)
      for (int px = static_cast<int>(x); px < static_cast<int>(x + w); ++px) {
        const bool edge = px < x + 2 || px >= x + w - 2 || py < y + 2 || py >= y + h - 2;
        if (!edge) continue;
        ++frame;
        red += is_ablated_red(img.at(px, py));
      }
    // The badge: the band over the cell (the slide's grid puts it above the heatmap).
    int orange = 0;
    for (int py = static_cast<int>(y - 18); py < static_cast<int>(y - 6); ++py)
      for (int px = static_cast<int>(x + 2); px < static_cast<int>(x + std::min(w, 60.0f)); ++px)
        orange += is_induction_orange(img.at(px, py));
    const bool is_induction = c["role"] == "induction";
    INFO("head " << c["layer"] << "." << c["head"] << " role " << c["role"] << ": red " << red << "/" << frame
                 << ", orange " << orange);
    REQUIRE(c["ablated"].get<bool>() == is_induction);  // the scenario knocks out the induction heads
    if (c["ablated"].get<bool>()) {
      REQUIRE(red > frame / 2);
      ++ablated;
    } else {
      REQUIRE(red == 0);
    }
    if (is_induction) {
      REQUIRE(orange > 40);
      ++induction;
    } else {
      REQUIRE(orange == 0);
    }
  }
  REQUIRE(ablated >= 1);
  REQUIRE(induction == ablated);
}

TEST_CASE("the model panel and the Training tab export at 2x") {
  if (!have_model()) return;
  REQUIRE(run("--export " + kOut + "/model@1x.png --scenario model --panel model") == 0);
  REQUIRE(run("--export " + kOut + "/model@2x.png --scenario model --panel model --scale 2") == 0);
  REQUIRE(run("--export " + kOut + "/timeline.png --scenario model --panel timeline") == 0);
  const Image one = load(kOut + "/model@1x.png"), two = load(kOut + "/model@2x.png");
  REQUIRE(two.w == 2 * one.w);
  REQUIRE(two.h == 2 * one.h);
  // The Training tab draws the timeline slide's plots: the repeated part's loss line in its
  // orange (0xE69F00) and the phase-change marker in vermillion (0xD55E00) are there.
  const Image tl = load(kOut + "/timeline.png");
  auto near = [](const unsigned char* p, int r, int g, int b) {
    return std::abs(p[0] - r) < 12 && std::abs(p[1] - g) < 12 && std::abs(p[2] - b) < 12;
  };
  int repeat = 0, phase = 0;
  for (int y = 0; y < tl.h; ++y)
    for (int x = 0; x < tl.w; ++x) {
      repeat += near(tl.at(x, y), 0xE6, 0x9F, 0x00);
      phase += near(tl.at(x, y), 0xD5, 0x5E, 0x00);
    }
  REQUIRE(repeat > 50);
  REQUIRE(phase > 50);
}

TEST_CASE("the slide view of model-ablate-induction shows the head grid slide with its crosses") {
  if (!have_model()) return;
  // The model's slide is built on a worker; the export waits for it, so the crosses over the
  // knocked-out heads and their bar (model_slides.cpp kKnocked, 0xD55E00) are in the PNG.
  const std::string png = kOut + "/model-slide-view.png";
  REQUIRE(run("--export " + png + " --scenario model-ablate-induction --panel slide") == 0);
  const Image img = load(png);
  int vermillion = 0;
  for (int y = 0; y < img.h; ++y)
    for (int x = 0; x < img.w; ++x) {
      const unsigned char* p = img.at(x, y);
      vermillion += p[0] > 190 && p[1] > 70 && p[1] < 120 && p[2] < 30;
    }
  REQUIRE(vermillion > 200);
}

TEST_CASE("a broken checkpoint exits 2 with one line naming model.json and writes no PNG") {
  if (!have_model()) return;
  const std::string bad = kOut + "/broken-model";
  std::filesystem::remove_all(bad);
  std::filesystem::copy(model_dir(), bad, std::filesystem::copy_options::recursive);
  std::ofstream(bad + "/model.json") << "{\"format\": \"attnsim-model\", ";
  const std::string err = kOut + "/broken.err";
  const int status = std::system((kApp + " --export " + kOut + "/broken.png --scenario model --model " + bad +
                                  " > /dev/null 2> " + err).c_str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 2);
  REQUIRE_FALSE(std::filesystem::exists(kOut + "/broken.png"));
  // One line about the checkpoint (a machine's own "attnsim: warning:" lines, e.g. about
  // OPENBLAS_CORETYPE, may come before it).
  std::ifstream in(err);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (line.find("attnsim: warning:") == std::string::npos) lines.push_back(line);
  REQUIRE(lines.size() == 1);
  REQUIRE(lines[0].find("model.json") != std::string::npos);
}

TEST_CASE("the Sampling tab draws the chart with the chosen token framed, and the Lens and Overview tabs open") {
  if (!have_model()) return;
  const std::string heads = kOut + "/model-heads-tab.png", sampling = kOut + "/model-sampling-tab.png";
  REQUIRE(run("--export " + heads + " --scenario model --panel model") == 0);
  REQUIRE(run("--export " + sampling + " --scenario model --panel model --action open-sampling") == 0);
  // The chosen bar's frame: the vermillion the knocked-out cells use, absent from the head grid
  // of the model scenario (no head knocked out).
  auto vermillion = [](const Image& img) {
    int n = 0;
    for (int y = 0; y < img.h; ++y)
      for (int x = 0; x < img.w; ++x) n += is_ablated_red(img.at(x, y));
    return n;
  };
  CHECK(vermillion(load(heads)) == 0);
  CHECK(vermillion(load(sampling)) > 100);
  for (const char* tab : {"open-lens", "open-overview"}) {
    const std::string png = kOut + "/model-" + tab + ".png";
    CHECK(run("--export " + png + " --scenario model --panel model --action " + tab) == 0);
    CHECK(load(png).w > 0);
  }
}
