// The Hugging Face panel in a real window under xvfb-run, on the tiny folders of tests/golden:
//   - the layer chosen with --layer is the one the panel marks and the tensor view shows:
//     layers 0 and 1 export different alpha
//   - a click (--click X,Y) on head 1.2's cell knocks out that head only: its cell alone is
//     framed and crossed; --ablate 0.3 does the same for 0.3
//   - --layer 9 on a 2-layer model, and a broken config.json, each exit 2 with one line and
//     leave no PNG
#include <catch2/catch.hpp>
#include <stb/stb_image.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

const std::string kApp = ATTNSIM_APP;
const std::string kOut = ATTNSIM_TEST_OUT;

std::string golden(const std::string& name) { return std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/" + name; }

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

// Exit status, and stderr without a machine's own "attnsim: warning:" lines.
struct Run {
  int status = -1;
  std::vector<std::string> errors;
};

Run run(const std::string& args) {
  const std::string err = kOut + "/hf-run.err";
  Run r;
  const int s = std::system((kApp + " " + args + " > /dev/null 2> " + err).c_str());
  r.status = WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  std::ifstream in(err);
  for (std::string line; std::getline(in, line);)
    if (line.find("attnsim: warning:") == std::string::npos) r.errors.push_back(line);
  return r;
}

nlohmann::json read_json(const std::string& path) {
  nlohmann::json j;
  std::ifstream(path) >> j;
  return j;
}

// The knocked-out mark: the slides' vermillion 0xD55E00 (panel_hf.cpp kKnocked).
bool is_knocked(const unsigned char* p) { return std::abs(p[0] - 0xD5) < 20 && std::abs(p[1] - 0x5E) < 20 && p[2] < 30; }

}  // namespace

TEST_CASE("HF window: the chosen layer reaches the panel and the tensor view; layers 0 and 1 export different alpha") {
  std::vector<std::vector<unsigned char>> alpha;
  for (int layer : {0, 1}) {
    const std::string png = kOut + "/hf-alpha-" + std::to_string(layer) + ".png", geo = kOut + "/hf-alpha.json";
    const Run r = run("--export " + png + " --panel tensor --step alpha --model " + golden("hf_gpt2_f32") +
                      " --layer " + std::to_string(layer) + " --geometry " + geo);
    REQUIRE(r.status == 0);
    const nlohmann::json g = read_json(geo);
    CHECK(g["hf_layer"] == layer);
    CHECK(g["step"] == "alpha");
    CHECK(g["rows"].size() > 0);
    alpha.push_back(load(png).rgba);
  }
  REQUIRE(alpha[0].size() == alpha[1].size());
  CHECK(alpha[0] != alpha[1]);
}

// The cells marked knocked out in a panel export, checked against its geometry.
void check_marked_cells(const std::string& png, const nlohmann::json& g, int layer, int head) {
  const Image img = load(png);
  const auto& panel = g["model_panel"];
  REQUIRE(img.w == static_cast<int>(panel[2].get<float>()));
  REQUIRE(g["hf_cells"].size() == 8);  // 2 layers x 4 heads
  for (const auto& c : g["hf_cells"]) {
    const bool expected = c["layer"] == layer && c["head"] == head;
    CHECK(c["ablated"].get<bool>() == expected);
    const int x0 = static_cast<int>(c["rect"][0].get<float>() - panel[0].get<float>());
    const int y0 = static_cast<int>(c["rect"][1].get<float>() - panel[1].get<float>());
    const int w = static_cast<int>(c["rect"][2].get<float>()), h = static_cast<int>(c["rect"][3].get<float>());
    int marked = 0;
    for (int y = y0; y < y0 + h; ++y)
      for (int x = x0; x < x0 + w; ++x) marked += is_knocked(img.at(x, y));
    INFO("cell " << c["layer"] << "." << c["head"] << ": " << marked << " vermillion pixels");
    CHECK((marked > 2 * (w + h)) == expected);  // the frame and the cross
  }
}

TEST_CASE("HF window: a click on a head's cell knocks that head out, and only it") {
  const std::string model = " --panel model --model " + golden("hf_gpt2_tok") + " --text \"hi 한국어\"";
  const std::string png = kOut + "/hf-grid.png", geo = kOut + "/hf-grid.json";
  REQUIRE(run("--export " + png + model + " --geometry " + geo).status == 0);
  nlohmann::json g = read_json(geo);
  CHECK(g["hf_tokens"] == 12);  // h, i, ·, then the 9 bytes of 한국어
  const double loss = g["hf_loss"];
  nlohmann::json target;
  for (const auto& c : g["hf_cells"]) {
    CHECK_FALSE(c["ablated"].get<bool>());
    if (c["layer"] == 1 && c["head"] == 2) target = c["rect"];
  }
  REQUIRE(target.is_array());
  const int cx = static_cast<int>(target[0].get<float>() + target[2].get<float>() / 2);
  const int cy = static_cast<int>(target[1].get<float>() + target[3].get<float>() / 2);
  REQUIRE(run("--export " + png + model + " --click " + std::to_string(cx) + "," + std::to_string(cy) + " --geometry " + geo)
              .status == 0);
  g = read_json(geo);
  check_marked_cells(png, g, 1, 2);
  CHECK(g["hf_loss"].get<double>() == loss);  // the plain pass is the same; the ablated one beside it

  // --ablate marks the same way
  REQUIRE(run("--export " + png + model + " --ablate 0.3 --geometry " + geo).status == 0);
  check_marked_cells(png, read_json(geo), 0, 3);
}

TEST_CASE("HF window: --layer 9 and a broken config.json each give one line, exit 2 and no PNG") {
  const std::string png = kOut + "/hf-refused.png";
  std::filesystem::remove(png);
  Run r = run("--export " + png + " --model " + golden("hf_gpt2_f32") + " --layer 9");
  CHECK(r.status == 2);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("layer 9") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(png));

  const std::string bad = kOut + "/hf-broken";
  std::filesystem::remove_all(bad);
  std::filesystem::copy(golden("hf_gpt2_f32"), bad);
  std::ofstream(bad + "/config.json") << R"({"model_type": "gpt2", "n_embd": 16, "n_head": 0, )";
  r = run("--export " + png + " --model " + bad);
  CHECK(r.status == 2);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("config.json") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(png));
}

// [SECTION] issue 37: a bad --model in a headless run is one line and exit 2 (it used to be
// dropped: the default scenario was exported, exit 0), and an export never replaces a device

TEST_CASE("HF window: --model that is not a model folder is one line, exit 2, nothing exported") {
  const std::string png = kOut + "/bad-model.png", bad = kOut + "/bad-models";
  std::filesystem::remove_all(bad);
  std::filesystem::create_directories(bad + "/fifo");
  REQUIRE(::mkfifo((bad + "/fifo/config.json").c_str(), 0600) == 0);
  std::filesystem::create_directories(bad + "/zero");
  std::filesystem::create_symlink("/dev/zero", bad + "/zero/config.json");
  std::filesystem::create_directories(bad + "/empty");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/nonexistent", "not a folder"},
      {"/etc/hostname", "not a folder"},
      {bad + "/fifo", "its config.json is not a regular file"},
      {bad + "/zero", "its config.json is not a regular file"},
      {bad + "/empty", "neither a Hugging Face folder"}};
  for (const auto& [model, says] : cases)
    for (const std::string& mode : {"--export " + png, std::string("--print-trace")}) {
      std::filesystem::remove(png);
      const Run r = run(mode + " --model " + model);
      INFO(mode << " --model " << model);
      CHECK(r.status == 2);
      REQUIRE(r.errors.size() == 1);
      CHECK(r.errors[0].find(says) != std::string::npos);
      CHECK_FALSE(std::filesystem::exists(png));
    }
  std::filesystem::remove_all(bad);
}

TEST_CASE("HF window: --export onto a character device leaves the device as it was") {
  const std::string dev = kOut + "/full-device.png";
  std::filesystem::remove(dev);
  if (::mknod(dev.c_str(), S_IFCHR | 0600, makedev(1, 7)) != 0) return;  // needs root, as CI has
  const Run r = run("--export " + dev);
  CHECK(r.status == 2);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("is a character device") != std::string::npos);
  struct stat st {};
  CHECK((::lstat(dev.c_str(), &st) == 0 && S_ISCHR(st.st_mode)));
  std::filesystem::remove(dev);
}
