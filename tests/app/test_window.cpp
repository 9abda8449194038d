// A real window under xvfb-run: attnsim renders the default and the query-padding NaN
// scenarios, exports PNGs, and the pixels say what a learner should see.
//   - the default view is not blank
//   - a 2x export is exactly twice the size of the 1x one (re-rendered, same layout)
//   - in query-padding-nan at alpha, batch element 1, the padded query rows (4 and 5) of
//     every head carry the NaN mark and the other rows do not
//   - the tensor panel's scores cells are figure::colormap of their values: the GPU heatmap
//     and the exported slides share one colour map
#include <catch2/catch.hpp>
#include <stb/stb_image.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "views/slide_scenes.h"
#include "engine/scenario.h"
#include "figure/palette.h"

namespace {

const std::string kApp = ATTNSIM_APP;
const std::string kOut = ATTNSIM_TEST_OUT;

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

int run(const std::string& args) {
  const std::string cmd = kApp + " " + args + " > /dev/null";
  return std::system(cmd.c_str());
}

// The NaN mark: the figures' NaN grey #b0b0b0 (palette.cpp), cross-hatched in dark ink.
bool is_nan_grey(const unsigned char* p) {
  return std::abs(p[0] - 0xb0) < 12 && std::abs(p[1] - 0xb0) < 12 && std::abs(p[2] - 0xb0) < 12;
}

}  // namespace

TEST_CASE("the default scenario renders a window that is not blank, and 2x is twice the size") {
  REQUIRE(run("--export " + kOut + "/default@1x.png --step alpha") == 0);
  REQUIRE(run("--export " + kOut + "/default@2x.png --step alpha --scale 2") == 0);
  const Image one = load(kOut + "/default@1x.png");
  const Image two = load(kOut + "/default@2x.png");
  REQUIRE(two.w == 2 * one.w);
  REQUIRE(two.h == 2 * one.h);
  std::set<uint32_t> colours;
  for (int y = 0; y < one.h; y += 3)
    for (int x = 0; x < one.w; x += 3) {
      const unsigned char* p = one.at(x, y);
      colours.insert(p[0] << 16 | p[1] << 8 | p[2]);
    }
  REQUIRE(colours.size() > 200);  // heatmaps, text, widgets: far from a blank clear colour
}

TEST_CASE("query-padding-nan: NaN rows carry the NaN colour at the padded query rows") {
  // The tensor panel (a bug scenario's centre shows the bug lab unless the tensor panel is asked).
  const std::string png = kOut + "/qpad.png", geo = kOut + "/qpad.json";
  REQUIRE(run("--export " + png + " --scenario query-padding-nan --step alpha --batch 1 --panel tensor "
              "--geometry " + geo) == 0);
  const Image img = load(png);
  nlohmann::json g;
  std::ifstream(geo) >> g;
  REQUIRE(g["step"] == "alpha");
  const auto& rows = g["rows"];
  const auto& panel = g.at("panels").at("tensor");
  REQUIRE(rows.size() == 4 * 6);  // 4 heads x Tq = 6 rows, in block order
  for (size_t i = 0; i < rows.size(); ++i) {
    const int query_row = static_cast<int>(i % 6);
    const float x = rows[i][0].get<float>() - panel[0].get<float>(), y = rows[i][1].get<float>() - panel[1].get<float>();
    const float w = rows[i][2], h = rows[i][3];
    int grey = 0, total = 0;
    for (int py = static_cast<int>(y + 2); py < static_cast<int>(y + h - 1); ++py)
      for (int px = static_cast<int>(x + 2); px < static_cast<int>(x + w - 1); ++px) {
        ++total;
        grey += is_nan_grey(img.at(px, py));
      }
    INFO("head " << i / 6 << " query row " << query_row << ": " << grey << "/" << total);
    REQUIRE(total > 20);
    if (query_row >= 4)
      REQUIRE(grey > total / 4);  // the grey between the hatch lines (the same mark as the slides')
    else
      REQUIRE(grey == 0);
  }
}

TEST_CASE("the tensor panel's GPU heatmap has the figures' colours: each scores cell is figure::colormap of its value") {
  const std::string png = kOut + "/scores.png", geo = kOut + "/scores.json";
  REQUIRE(run("--export " + png + " --step scores --geometry " + geo) == 0);
  const Image img = load(png);
  nlohmann::json g;
  std::ifstream(geo) >> g;
  const auto& rows = g["rows"];
  REQUIRE(rows.size() == 4 * 6);  // 4 heads x Tq = 6 rows
  // The same run the app computed (the default scenario is deterministic), on the shared scale.
  const auto data = attnsim::app::compute_run(attnsim::find_scenario("default"));
  const attnsim::Tensor& s = data->run.trace.at("scores").out;  // (1, 4, 6, 6)
  float m = 0;
  for (float v : s.to_vector()) m = std::max(m, std::fabs(v));
  REQUIRE(m > 0);
  int far = 0;
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t i = 0; i < 6; ++i) {
      const auto& r = rows[static_cast<size_t>(h * 6 + i)];
      const float x0 = r[0], y0 = r[1], w = r[2], hgt = r[3];
      for (int64_t j = 0; j < 6; ++j) {
        const float v = s.at({0, h, i, j});
        const attnsim::figure::Color want =
            attnsim::figure::colormap(attnsim::figure::ColorMapId::Diverging, 0.5f + 0.5f * v / m);
        const unsigned char* p =
            img.at(static_cast<int>(x0 + (static_cast<float>(j) + 0.5f) * w / 6), static_cast<int>(y0 + hgt / 2));
        const int d = std::max({std::abs(p[0] - static_cast<int>(std::lround(want.r * 255))),
                                std::abs(p[1] - static_cast<int>(std::lround(want.g * 255))),
                                std::abs(p[2] - static_cast<int>(std::lround(want.b * 255)))});
        INFO("head " << h << " (" << i << ", " << j << ") value " << v << ": screen " << int(p[0]) << "," << int(p[1])
                     << "," << int(p[2]) << " figure " << want.r * 255 << "," << want.g * 255 << "," << want.b * 255);
        CHECK(d <= 3);  // 8-bit colour atlas and framebuffer
        far += d > 3;
      }
    }
  CHECK(far == 0);
}

TEST_CASE("export-slides writes one PNG per step that ran") {
  const std::string dir = kOut + "/slides";
  REQUIRE(run("--export-slides " + dir + " --force") == 0);  // --force: the folder of the last run
  std::ifstream index(dir + "/index.md");
  REQUIRE(index.good());
  int n = 0;
  for (std::string line; std::getline(index, line);) n += line.find(".png") != std::string::npos;
  REQUIRE(n >= 20);  // 25 steps minus the skipped q_rot, k_rot, mask and dropout
}

TEST_CASE("the bug lab and the flash panel export on their own at 2x") {
  REQUIRE(run("--export " + kOut + "/buglab.png --scenario mask-inverted --panel buglab "
              "--action check-hidden --scale 2") == 0);
  REQUIRE(run("--export " + kOut + "/flash.png --scenario query-padding-nan --batch 1 "
              "--panel flash --progress 0.5") == 0);
  for (const char* name : {"/buglab.png", "/flash.png"}) {
    const Image img = load(kOut + name);
    std::set<uint32_t> colours;
    for (int y = 0; y < img.h; y += 2)
      for (int x = 0; x < img.w; x += 2) {
        const unsigned char* p = img.at(x, y);
        colours.insert(p[0] << 16 | p[1] << 8 | p[2]);
      }
    INFO(name);
    REQUIRE(colours.size() > 100);
  }
}

TEST_CASE("the bug lab panel draws the buglab figure where its layout says: NaN marks on the padded rows") {
  const std::string png = kOut + "/buglab-figure.png", geo = kOut + "/buglab-figure.json";
  REQUIRE(run("--export " + png + " --scenario query-padding-nan --step alpha --batch 1 --head 1 --panel buglab "
              "--geometry " + geo) == 0);
  nlohmann::json g;
  std::ifstream(geo) >> g;
  const Image img = load(png);
  const auto& r = g.at("buglab_bug");
  const auto& p = g.at("panels").at("buglab");
  const float x = r[0].get<float>() - p[0].get<float>(), y = r[1].get<float>() - p[1].get<float>();
  const float w = r[2], h = r[3];
  INFO("bug block " << x << "," << y << " " << w << "x" << h << " in " << img.w << "x" << img.h);
  REQUIRE(x >= 0);
  REQUIRE(y >= 0);
  REQUIRE(x + w <= static_cast<float>(img.w));
  REQUIRE(y + h <= static_cast<float>(img.h));
  // Rows 4 and 5 (the padded queries) are NaN in the run with the bug: the figure's NaN mark,
  // the projector theme's #b0b0b0 under dark stripes; rows 0..3 are viridis weights.
  for (int row = 0; row < 6; ++row) {
    int grey = 0, total = 0;
    for (int py = static_cast<int>(y + h * row / 6 + 2); py < static_cast<int>(y + h * (row + 1) / 6 - 2); ++py)
      for (int px = static_cast<int>(x + 2); px < static_cast<int>(x + w - 2); ++px) {
        const unsigned char* c = img.at(px, py);
        ++total;
        grey += std::abs(c[0] - 0xb0) < 12 && std::abs(c[1] - 0xb0) < 12 && std::abs(c[2] - 0xb0) < 12;
      }
    INFO("row " << row << ": " << grey << "/" << total);
    REQUIRE(total > 20);
    if (row >= 4) CHECK(grey > total / 10);  // the base between the hatch lines (~16%)
    else CHECK(grey == 0);
  }
}

TEST_CASE("the decode panel exports for every decode scenario and fits at 1280x800; other scenarios refuse --panel decode") {
  for (const char* name : {"decode", "decode-gqa", "decode-mqa", "decode-paged", "decode-sink", "decode-model",
                           "decode-model-sinks"}) {
    const std::string png = kOut + "/" + name + ".png", geometry = kOut + "/" + name + ".json";
    INFO(name);
    REQUIRE(run("--export " + png + " --scenario " + name + " --panel decode --progress 0.5 --geometry " + geometry) == 0);
    nlohmann::json j;
    std::ifstream(geometry) >> j;
    CHECK(j.at("decode_overflow").get<double>() <= 0.0);  // nothing drawn below the panel: no scrolling
    const Image img = load(png);
    std::set<uint32_t> colours;
    for (int y = 0; y < img.h; y += 2)
      for (int x = 0; x < img.w; x += 2) {
        const unsigned char* p = img.at(x, y);
        colours.insert(p[0] << 16 | p[1] << 8 | p[2]);
      }
    REQUIRE(colours.size() > 100);  // cache strips, alpha, tokens, group colours
  }
  const int status = run("--export " + kOut + "/not-decode.png --panel decode 2> /dev/null");
  CHECK(WEXITSTATUS(status) == 2);
}

TEST_CASE("the slide view draws the exported slide's figure on screen, in the projector theme") {
  const std::string png = kOut + "/slide-view.png";
  REQUIRE(run("--export " + png + " --panel slide --step alpha --theme projector") == 0);
  const Image img = load(png);
  // The projector theme's background (#121418) fills the letterboxed slide: most of the panel.
  int64_t dark = 0, total = 0;
  std::set<uint32_t> colours;
  for (int y = 0; y < img.h; y += 2)
    for (int x = 0; x < img.w; x += 2) {
      const unsigned char* p = img.at(x, y);
      dark += p[0] == 0x12 && p[1] == 0x14 && p[2] == 0x18;
      colours.insert(p[0] << 16 | p[1] << 8 | p[2]);
      ++total;
    }
  CHECK(dark * 3 > total);
  CHECK(colours.size() > 100);  // heatmaps, labels and legend, not an empty box
}

TEST_CASE("a transparent export keeps the background see-through and the heatmap opaque") {
  const std::string png = kOut + "/transparent.png";
  REQUIRE(run("--export " + png + " --panel tensor --step alpha --transparent") == 0);
  const Image img = load(png);
  int clear = 0;
  for (int x = 0; x < img.w; ++x) clear += img.at(x, img.h - 2)[3] == 0;  // bottom edge
  REQUIRE(clear > img.w / 4);
  // the heatmaps fill the middle of the tensor panel
  int opaque = 0;
  for (int y = img.h / 3; y < img.h * 2 / 3; y += 4)
    for (int x = img.w / 4; x < img.w * 3 / 4; x += 4) opaque += img.at(x, y)[3] == 255;
  REQUIRE(opaque > 0);
}

TEST_CASE("an export to an unwritable place exits 2 and leaves no file behind") {
  const int status = run("--export /nonexistent-dir/x.png 2>/dev/null");
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK_FALSE(std::ifstream("/nonexistent-dir/x.png").good());
  const int bad_step = run("--export " + kOut + "/never.png --step alpah 2>/dev/null");
  CHECK(WEXITSTATUS(bad_step) == 2);
  CHECK_FALSE(std::ifstream(kOut + "/never.png").good());
}

// [SECTION] hostile input (issue 14): every failed export is one line, exit 2, nothing left

namespace {

struct Run {
  int code;
  std::string err;
};

// Runs attnsim through bash (for `ulimit -f`); stderr is captured, stdout dropped.
Run run_sh(const std::string& prefix, const std::string& args) {
  const std::string cmd = "bash -c \"" + prefix + " " + kApp + " " + args + " 2>&1 >/dev/null\"";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// A full disk without root: files may grow to 64 KiB, and SIGXFSZ is ignored so the write
// past it fails with EFBIG instead of killing the process.
const std::string kFullDisk = "trap '' XFSZ; ulimit -f 64;";

}  // namespace

TEST_CASE("a PNG export on a full disk exits 2 and leaves no file") {
  const std::string png = kOut + "/full.png";
  std::remove(png.c_str());
  const Run r = run_sh(kFullDisk, "--export " + png + " --scale 4");
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find("File too large") != std::string::npos);
  CHECK_FALSE(std::ifstream(png).good());
}

TEST_CASE("slides on a full disk exit 2 and leave no folder, no index.md") {
  const std::string dir = kOut + "/full-slides";
  std::system(("rm -rf " + dir).c_str());
  // --scale 4: a figure slide at 1280x720 is smaller than the 64 KiB limit; at 5120x2880 the
  // first one is not.
  const Run r = run_sh(kFullDisk, "--export-slides " + dir + " --scale 4");
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK_FALSE(std::ifstream(dir + "/index.md").good());
  CHECK(std::system(("test -e " + dir).c_str()) != 0);
  CHECK(std::system(("ls -a " + kOut + " | grep -q '\\.tmp'").c_str()) != 0);  // no temporaries either
}

TEST_CASE("--geometry to an unwritable path exits 2 and takes the PNG back") {
  const std::string png = kOut + "/geo-fail.png";
  std::remove(png.c_str());
  const Run r = run_sh("", "--export " + png + " --geometry /nonexistent-dir/g.json");
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find("/nonexistent-dir/g.json") != std::string::npos);
  CHECK_FALSE(std::ifstream(png).good());
}

TEST_CASE("--lesson with a broken lesson and --export exits 2 and writes no PNG") {
  const std::string png = kOut + "/broken-lesson.png";
  std::remove(png.c_str());
  const Run r = run_sh("", "--lesson " + std::string(ATTNSIM_SOURCE_DIR) + "/tests/lessons/unknown-step.toml --export " + png);
  CHECK(r.code == 2);
  CHECK_FALSE(std::ifstream(png).good());
}

TEST_CASE("lesson 13 in the lesson layout: the decode panel shows the strips and the loss plot beside them, no scrolling") {
  // A fresh progress folder: the lesson opens at its first step (policy window=16).
  const std::string data = kOut + "/lesson13-data", png = kOut + "/lesson13.png", geometry = kOut + "/lesson13.json";
  std::system(("rm -rf " + data + " && mkdir -p " + data).c_str());
  const Run r = run_sh("XDG_DATA_HOME=" + data, "--lesson " + std::string(ATTNSIM_SOURCE_DIR) +
                                                    "/lessons/13-sinks.toml --export " + png + " --geometry " + geometry);
  INFO(r.err);
  REQUIRE(r.code == 0);
  nlohmann::json j;
  std::ifstream(geometry) >> j;
  REQUIRE(j.at("panels").contains("lesson"));  // the lesson layout: the lesson panel under the view
  CHECK(j.at("decode_overflow").get<double>() <= 0.0);
  const auto& panel = j.at("panels").at("decode");
  const auto& strips = j.at("decode_strips");
  const auto& plot = j.at("decode_plot");
  const double panel_right = panel[0].get<double>() + panel[2].get<double>();
  const double panel_bottom = panel[1].get<double>() + panel[3].get<double>();
  CHECK(plot[0].get<double>() > strips[0].get<double>() + strips[2].get<double>());  // right of the strips
  CHECK(plot[1].get<double>() == strips[1].get<double>());                            // beside them
  CHECK(plot[0].get<double>() + plot[2].get<double>() <= panel_right);
  CHECK(plot[1].get<double>() + plot[3].get<double>() <= panel_bottom);
  CHECK(plot[2].get<double>() >= 200);
}

TEST_CASE("option errors are one line that points to --help") {
  for (const char* args : {"--scale 3", "--bench-frames 99999999999999999999", "--batch -1", "--frobnicate",
                           "--scenario $'no\\nsuch'"}) {
    INFO(args);
    const Run r = run_sh("", args);
    CHECK(r.code == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find("(see --help)") != std::string::npos);
  }
}

TEST_CASE("the flash and memory panels draw their figures where the figures' own layouts say") {
  // (x, y, w, h) of a figure part relative to its panel's PNG
  auto rect_in_panel = [](const nlohmann::json& g, const char* part, const char* panel) {
    const auto& r = g.at(part);
    const auto& p = g.at("panels").at(panel);
    return std::array<int, 4>{static_cast<int>(r[0].get<double>() - p[0].get<double>()),
                              static_cast<int>(r[1].get<double>() - p[1].get<double>()),
                              static_cast<int>(r[2].get<double>()), static_cast<int>(r[3].get<double>())};
  };
  {
    const std::string png = kOut + "/flash-figure.png", geo = kOut + "/flash-figure.json";
    REQUIRE(run("--export " + png + " --panel flash --progress 0.5 --geometry " + geo) == 0);
    nlohmann::json g;
    std::ifstream(geo) >> g;
    const Image img = load(png);
    const auto r = rect_in_panel(g, "flash_grid", "flash");
    INFO("grid " << r[0] << "," << r[1] << " " << r[2] << "x" << r[3] << " in " << img.w << "x" << img.h);
    REQUIRE(r[0] >= 0);
    REQUIRE(r[1] >= 0);
    REQUIRE(r[0] + r[2] <= img.w);
    REQUIRE(r[1] + r[3] <= img.h);
    REQUIRE(r[2] > 60);
    std::set<uint32_t> colours;
    // The event's tile outline in the panel theme (the dark UI's: projector, highlight #ffb347),
    // not the slide theme (print by default).
    int lit = 0;
    for (int y = std::max(0, r[1] - 4); y < std::min(img.h, r[1] + r[3] + 4); ++y)
      for (int x = std::max(0, r[0] - 4); x < std::min(img.w, r[0] + r[2] + 4); ++x) {
        const unsigned char* p = img.at(x, y);
        colours.insert(p[0] << 16 | p[1] << 8 | p[2]);
        lit += std::abs(p[0] - 0xff) < 12 && std::abs(p[1] - 0xb3) < 12 && std::abs(p[2] - 0x47) < 12;
      }
    CHECK(colours.size() > 20);  // the visited tiles' scores
    CHECK(lit > 40);
  }
  {
    const std::string png = kOut + "/memory-figure.png", geo = kOut + "/memory-figure.json";
    REQUIRE(run("--export " + png + " --panel memory --step q_heads --geometry " + geo) == 0);
    nlohmann::json g;
    std::ifstream(geo) >> g;
    const Image img = load(png);
    const auto r = rect_in_panel(g, "memory_strip", "memory");
    INFO("strip " << r[0] << "," << r[1] << " " << r[2] << "x" << r[3] << " in " << img.w << "x" << img.h);
    REQUIRE(r[0] >= 0);
    REQUIRE(r[1] >= 0);
    REQUIRE(r[0] + r[2] <= img.w);
    REQUIRE(r[1] + r[3] <= img.h);
    std::set<uint32_t> inside;
    for (int y = r[1] + 1; y < r[1] + r[3] - 1; ++y)
      for (int x = r[0] + 1; x < r[0] + r[2] - 1; ++x) {
        const unsigned char* p = img.at(x, y);
        inside.insert(p[0] << 16 | p[1] << 8 | p[2]);
      }
    CHECK(inside.size() > 30);  // q_heads' stored values on the diverging map, the walk over them
  }
}

TEST_CASE("the interface scale 2 makes its text twice the size and the window option sets the picture size") {
  const std::string one = kOut + "/ui1.json", two = kOut + "/ui2.json";
  REQUIRE(run("--export " + kOut + "/ui1.png --window 1280x720 --geometry " + one) == 0);
  REQUIRE(run("--export " + kOut + "/ui2.png --window 1280x720 --ui-scale 2 --geometry " + two) == 0);
  nlohmann::json a, b;
  std::ifstream(one) >> a;
  std::ifstream(two) >> b;
  CHECK(a["font_px"].get<double>() == Approx(16.0));
  CHECK(b["font_px"].get<double>() == Approx(2 * a["font_px"].get<double>()));
  const Image img = load(kOut + "/ui2.png");
  CHECK(img.w == 1280);
  CHECK(img.h == 720);
  // The panels' widths grow with the text, and still tile the window side by side.
  CHECK(b["panels"]["pipeline"][2].get<double>() > a["panels"]["pipeline"][2].get<double>());
  CHECK(b["panels"]["controls"][0].get<double>() + b["panels"]["controls"][2].get<double>() <= 1280.5);
}

TEST_CASE("the start view fits a 1280x720 projector: its chart and every head and the three doors are on screen") {
  const std::string geo = kOut + "/start720.json";
  REQUIRE(run("--export " + kOut + "/start720.png --scenario start --window 1280x720 --geometry " + geo) == 0);
  nlohmann::json j;
  std::ifstream(geo) >> j;
  for (const char* part : {"start_chart", "start_heads", "start_doors"}) {
    INFO(part);
    REQUIRE(j.contains(part));
    const auto& r = j[part];
    CHECK(r[0].get<double>() >= 0);
    CHECK(r[1].get<double>() >= 0);
    CHECK(r[0].get<double>() + r[2].get<double>() <= 1280.5);
    CHECK(r[1].get<double>() + r[3].get<double>() <= 720.5);
    CHECK(r[2].get<double>() > 100);
  }
}
