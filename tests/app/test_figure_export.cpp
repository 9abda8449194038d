// Slides, decks and animations exported through the figure sinks, run as a user would:
// attnsim --export FILE.{png,svg,pdf}, --export-slides DIR --format, --export-gif,
// --export-frames. None of them opens a window (no Xvfb needed). Checks use Debian's tools
// where a user would: xmllint for SVG, pdfinfo / pdftotext for PDF, giflib for GIF.
#include <catch2/catch.hpp>
#include <gif_lib.h>
#include <stb/stb_image.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lessons/lesson.h"
#include "lessons/markup.h"

namespace fs = std::filesystem;

namespace {

const std::string kApp = ATTNSIM_APP;
const std::string kSource = ATTNSIM_SOURCE_DIR;
const std::string kOut = ATTNSIM_TEST_OUT;

int run(const std::string& args) {
  return std::system((kApp + " " + args + " > /dev/null").c_str());
}

// stdout + stderr of a command.
std::string output_of(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

int pdf_pages(const std::string& path) {
  const std::string info = output_of("pdfinfo " + path);
  const size_t at = info.find("Pages:");
  return at == std::string::npos ? -1 : std::atoi(info.c_str() + at + 6);
}

std::vector<unsigned char> pixels(const std::string& path, int* w, int* h) {
  int n = 0;
  unsigned char* data = stbi_load(path.c_str(), w, h, &n, 4);
  REQUIRE(data != nullptr);
  std::vector<unsigned char> out(data, data + static_cast<size_t>(*w) * static_cast<size_t>(*h) * 4);
  stbi_image_free(data);
  return out;
}

// Nothing in a folder but what a finished export leaves (no *.tmp-* files).
bool no_temporaries(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) return false;
  return true;
}

}  // namespace

TEST_CASE("a lesson exports as one PDF deck: the title page plus one page per step, titles in ko and en") {
  const std::string lesson = kSource + "/lessons/05-masks.toml";
  const auto loaded = attnsim::lessons::load_lesson(lesson);
  REQUIRE(loaded.lesson);
  for (const char* lang : {"ko", "en"}) {
    const std::string dir = kOut + "/deck-" + lang;
    fs::remove_all(dir);
    REQUIRE(run("--lesson " + lesson + " --export-slides " + dir + " --format pdf --lang " + lang) == 0);
    const std::string pdf = dir + "/lesson.pdf";
    CHECK(pdf_pages(pdf) == static_cast<int>(loaded.lesson->steps.size()) + 1);
    const std::string text = output_of("pdftotext " + pdf + " -");
    const auto want = std::string(lang) == "ko" ? attnsim::lessons::Lang::Ko : attnsim::lessons::Lang::En;
    // Slides show plain text: a quoted figure ({quote:-1e9}) keeps its text, loses its mark.
    auto plain = [&](const attnsim::lessons::Text& t) {
      return attnsim::lessons::plain_text(attnsim::lessons::parse_markup(t.get(want)));
    };
    CHECK(text.find(plain(loaded.lesson->title)) != std::string::npos);
    for (const auto& step : loaded.lesson->steps) {
      INFO(plain(step.title));
      CHECK(text.find(plain(step.title)) != std::string::npos);
    }
    CHECK(read_file(dir + "/index.md").find("lesson.pdf") != std::string::npos);
    CHECK(read_file(dir + "/index.html").find("<embed src=\"lesson.pdf\"") != std::string::npos);
    CHECK(no_temporaries(dir));
  }
}

TEST_CASE("every lesson in lessons/ exports as a PDF deck with one page per step") {
  // Each lesson's steps run on their own presets (decode-gqa's grouped keys, the article's
  // sizes, the bug-lab pairs): a scenario the slide path cannot run fails here.
  for (const auto& e : fs::directory_iterator(kSource + "/lessons")) {
    if (e.path().extension() != ".toml") continue;
    INFO(e.path().filename().string());
    const auto loaded = attnsim::lessons::load_lesson(e.path().string());
    REQUIRE(loaded.lesson);
    const std::string dir = kOut + "/every-" + e.path().stem().string();
    fs::remove_all(dir);
    CHECK(run("--lesson " + e.path().string() + " --export-slides " + dir + " --format pdf --lang en") == 0);
    CHECK(pdf_pages(dir + "/lesson.pdf") == static_cast<int>(loaded.lesson->steps.size()) + 1);
  }
}

TEST_CASE("slides as SVG parse as XML, carry the step title and one <text> per label") {
  const std::string dir = kOut + "/svg-slides";
  fs::remove_all(dir);
  REQUIRE(run("--export-slides " + dir + " --format svg --lang en") == 0);
  const std::string alpha = dir + "/" + [&] {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().find("-alpha.svg") != std::string::npos) return e.path().filename().string();
    return std::string("missing");
  }();
  REQUIRE(fs::exists(alpha));
  CHECK(std::system(("xmllint --noout " + alpha).c_str()) == 0);
  const std::string svg = read_file(alpha);
  CHECK(svg.find("<title>alpha  (1, 4, 6, 6)</title>") != std::string::npos);
  // Default scenario: 6 query tokens x 6 key tokens, 4 heads, every label fits: 4 head names,
  // 6 key tokens over each head, 6 query tokens left of each grid row (1 or 2 rows).
  const size_t labels = count(svg, "<text class=\"label\"");
  CHECK((labels == 4 + 24 + 6 || labels == 4 + 24 + 12));
  CHECK(count(svg, ">고양이가</text>") >= 4);
  const std::string html = read_file(dir + "/index.html");
  CHECK(html.find("00-title.svg") < html.find("-alpha.svg"));  // in order
}

TEST_CASE("a Korean mask slide's legend names its ends in Korean") {
  const std::string svg = kOut + "/mask-ko.svg";
  REQUIRE(run("--export " + svg + " --scenario mask-two-fills --step mask --lang ko") == 0);
  const std::string text = read_file(svg);
  CHECK(text.find(">보임</text>") != std::string::npos);
  CHECK(text.find(">가림</text>") != std::string::npos);
  CHECK(text.find(">shown</text>") == std::string::npos);
}

TEST_CASE("the article-size tensor view as SVG stays under 2 MB (large heatmaps are one image each)") {
  const std::string svg = kOut + "/article-alpha.svg";
  REQUIRE(run("--export " + svg + " --scenario article --step alpha") == 0);
  CHECK(fs::file_size(svg) <= 2u * 1024 * 1024);
  CHECK(count(read_file(svg), "<image ") == 8);
  CHECK(std::system(("xmllint --noout " + svg).c_str()) == 0);
}

TEST_CASE("slide PNGs come at 1280x720, 1920x1080 and --scale 2, and ignore every widget state") {
  int w = 0, h = 0;
  const std::string a = kOut + "/slide-a.png", b = kOut + "/slide-b.png", big = kOut + "/slide-1080.png";
  REQUIRE(run("--export " + a + " --slide --scenario mask-inverted --step alpha --panel buglab") == 0);
  // The same slide with the app's widget state changed: a button pressed, the transparent
  // export toggle, a mid-transition progress. A slide has no widgets, so nothing changes.
  REQUIRE(run("--export " + b + " --slide --scenario mask-inverted --step alpha --panel buglab "
              "--action check-hidden --transparent --progress 0.3") == 0);
  const auto pa = pixels(a, &w, &h);
  CHECK(w == 1280);
  CHECK(h == 720);
  CHECK(pa == pixels(b, &w, &h));
  REQUIRE(run("--export " + big + " --slide --size 1920x1080 --theme projector") == 0);
  pixels(big, &w, &h);
  CHECK(w == 1920);
  CHECK(h == 1080);
  REQUIRE(run("--export " + big + " --slide --scale 2") == 0);
  pixels(big, &w, &h);
  CHECK(w == 2560);
}

TEST_CASE("an animated GIF of view -> transpose decodes with the expected frames and size") {
  const std::string gif = kOut + "/heads.gif";
  REQUIRE(run("--export-gif " + gif + " --from q_proj --to q_heads --fps 10 --seconds 2 --size 640x360") == 0);
  int err = 0;
  GifFileType* g = DGifOpenFileName(gif.c_str(), &err);
  REQUIRE(g != nullptr);
  REQUIRE(DGifSlurp(g) == GIF_OK);
  CHECK(g->ImageCount == 2 * 10);  // two moves (view, transpose), 10 frames each
  CHECK(g->SWidth == 640);
  CHECK(g->SHeight == 360);
  DGifCloseFile(g, &err);
  // Reduced motion: three still frames.
  REQUIRE(run("--export-gif " + gif + " --from q_proj --to q_heads --reduced-motion --size 640x360") == 0);
  g = DGifOpenFileName(gif.c_str(), &err);
  REQUIRE(g != nullptr);
  REQUIRE(DGifSlurp(g) == GIF_OK);
  CHECK(g->ImageCount == 3);
  DGifCloseFile(g, &err);
}

TEST_CASE("the flash tiles advancing: one GIF frame per tile event, three with reduced motion") {
  // default scenario (T 6, no mask): Br = Bc = 2, 3 x 3 tiles visited + 3 final divisions.
  const std::string gif = kOut + "/flash.gif";
  REQUIRE(run("--export-gif " + gif + " --panel flash --size 640x360") == 0);
  int err = 0;
  GifFileType* g = DGifOpenFileName(gif.c_str(), &err);
  REQUIRE(g != nullptr);
  REQUIRE(DGifSlurp(g) == GIF_OK);
  CHECK(g->ImageCount == 12);
  CHECK(g->SWidth == 640);
  DGifCloseFile(g, &err);
  // a causal mask (mask-inverted runs the tiled path with the correct causal mask): the 3
  // tiles above the diagonal are skipped events, still 12 in all
  REQUIRE(run("--export-gif " + gif + " --panel flash --scenario mask-inverted --size 640x360") == 0);
  g = DGifOpenFileName(gif.c_str(), &err);
  REQUIRE(g != nullptr);
  REQUIRE(DGifSlurp(g) == GIF_OK);
  CHECK(g->ImageCount == 12);
  DGifCloseFile(g, &err);
  REQUIRE(run("--export-gif " + gif + " --panel flash --reduced-motion --size 640x360") == 0);
  g = DGifOpenFileName(gif.c_str(), &err);
  REQUIRE(g != nullptr);
  REQUIRE(DGifSlurp(g) == GIF_OK);
  CHECK(g->ImageCount == 3);
  DGifCloseFile(g, &err);
}

TEST_CASE("decode calls as a GIF: each call's K/V rows fly into the cache, three calls with reduced motion") {
  const std::string gif = kOut + "/decode.gif";
  fs::remove(gif);
  // calls 2 -> 5: the slide of call 2, then 3 moves of fps x seconds / 3 = 8 frames each
  REQUIRE(run("--export-gif " + gif + " --panel decode --scenario decode-gqa --from 2 --to 5 --fps 8 --seconds 3 --size 640x360") == 0);
  int err = 0;
  GifFileType* g = DGifOpenFileName(gif.c_str(), &err);
  REQUIRE(g != nullptr);
  REQUIRE(DGifSlurp(g) == GIF_OK);
  CHECK(g->ImageCount == 1 + 3 * 8);
  CHECK(g->SWidth == 640);
  CHECK(g->SHeight == 360);
  DGifCloseFile(g, &err);
  REQUIRE(run("--export-gif " + gif + " --panel decode --scenario decode-gqa --reduced-motion --size 640x360") == 0);
  g = DGifOpenFileName(gif.c_str(), &err);
  REQUIRE(g != nullptr);
  REQUIRE(DGifSlurp(g) == GIF_OK);
  CHECK(g->ImageCount == 3);
  DGifCloseFile(g, &err);
}

TEST_CASE("flash, memory and cost lesson steps get their own figures in the deck, searchable in ko and en") {
  struct Want {
    const char* lesson;
    std::vector<std::string> ko, en;
  };
  // The flash grid's m / l columns, the memory strip's headline, the cost table's values.
  const std::vector<Want> wants = {
      // steps 1-2: the tile grid; steps 3-4 (IO model at T 4096): the engine's figures
      {"08-flash.toml", {"최댓값 m", "합 l", "질의 블록", "표준 경로의 S와 P", "1,073,741,824"},
       {"max m", "sum l", "query block", "S and P of the standard path", "1,073,741,824"}},
      {"03-views-and-copies.toml", {"스트라이드", "같은 저장소"}, {"strides", "same storage, new strides"}},
      {"07-cost.toml", {"엔진의 값", "1,048,576"}, {"the engine's value", "1,048,576"}},
  };
  for (const auto& w : wants)
    for (const char* lang : {"ko", "en"}) {
      INFO(w.lesson << " " << lang);
      const std::string dir = kOut + "/figures-" + std::string(w.lesson) + "-" + lang;
      fs::remove_all(dir);
      REQUIRE(run("--lesson " + kSource + "/lessons/" + w.lesson + " --export-slides " + dir + " --format pdf --lang " +
                  lang) == 0);
      // pdftotext keeps the figure's words: text, not pixels
      const std::string text = output_of("pdftotext " + dir + "/lesson.pdf -");
      for (const auto& s : std::string(lang) == "ko" ? w.ko : w.en) {
        INFO(s);
        CHECK(text.find(s) != std::string::npos);
      }
    }
}

TEST_CASE("decode lesson steps get the decode slide (tokens, K/V strips, every layer's alpha) under their own titles") {
  // Lessons 10 (a live decode), 12 (GQA) and 13 (sinks on the trained model): each decode-panel
  // step's page is the decode panel's last call, found by its footer and its strip labels.
  for (const char* name : {"10-kv-cache.toml", "12-gqa.toml", "13-sinks.toml"})
    for (const char* lang : {"ko", "en"}) {
      INFO(name << " " << lang);
      const auto loaded = attnsim::lessons::load_lesson(kSource + "/lessons/" + name);
      REQUIRE(loaded.lesson);
      const std::string dir = kOut + "/decode-deck-" + std::string(name) + "-" + lang;
      fs::remove_all(dir);
      REQUIRE(run("--lesson " + kSource + "/lessons/" + name + " --export-slides " + dir + " --format pdf --lang " + lang) ==
              0);
      const std::string text = output_of("pdftotext " + dir + "/lesson.pdf -");
      const bool ko = std::string(lang) == "ko";
      const auto want = ko ? attnsim::lessons::Lang::Ko : attnsim::lessons::Lang::En;
      size_t decode_steps = 0;
      for (const auto& step : loaded.lesson->steps) {
        const std::string title = attnsim::lessons::plain_text(attnsim::lessons::parse_markup(step.title.get(want)));
        INFO(title);
        CHECK(text.find(title) != std::string::npos);
        decode_steps += step.panel == "decode" ? 1 : 0;
      }
      REQUIRE(decode_steps > 0);
      CHECK(count(text, ko ? "디코딩 호출" : "decode call") == decode_steps);  // one decode footer per step
      CHECK(text.find("V0") != std::string::npos);  // "K0"/"V0", or "K/V0" in a narrow band
      CHECK(text.find(ko ? "층 0" : "layer 0") != std::string::npos);
    }
}

TEST_CASE("export-frames writes the same frames as numbered PNGs") {
  const std::string dir = kOut + "/frames";
  fs::remove_all(dir);
  REQUIRE(run("--export-frames " + dir + " --scenario query-padding-nan --batch 1 --from scores_masked --to ctx_heads "
              "--fps 4 --seconds 1 --size 640x360") == 0);
  // scores_masked -> alpha -> ctx_heads (alpha_dropped is skipped in eval mode): 2 moves x 2.
  CHECK(fs::exists(dir + "/frame-0001.png"));
  CHECK(fs::exists(dir + "/frame-0004.png"));
  CHECK_FALSE(fs::exists(dir + "/frame-0005.png"));
  CHECK(no_temporaries(dir));
}

TEST_CASE("bad input: one line, exit 2, no file left behind") {
  struct Case {
    std::string args, file;
  };
  const std::vector<Case> cases = {
      {"--export /nonexistent-dir/x.pdf", "/nonexistent-dir/x.pdf"},
      {"--export " + kOut + "/bad.bmp", kOut + "/bad.bmp"},
      {"--export-slides " + kOut + "/bad-format --format docx", kOut + "/bad-format"},
      {"--export-gif " + kOut + "/bad.gif --from alpha --to scores", kOut + "/bad.gif"},
      {"--export-gif " + kOut + "/bad2.gif --from alpha --to alpha", kOut + "/bad2.gif"},
      {"--export-gif " + kOut + "/bad3.gif --from q_proj --to nowhere", kOut + "/bad3.gif"},
      {"--export-slides /proc/attnsim-cannot --format pdf", "/proc/attnsim-cannot"},
      {"--export " + kOut + "/bad-head.png --slide --panel flash --head 9", kOut + "/bad-head.png"},
      {"--export-gif " + kOut + "/bad4.gif --panel decode --scenario decode-gqa --from 7 --to 3", kOut + "/bad4.gif"},
      {"--export-gif " + kOut + "/bad5.gif --panel decode --scenario decode-gqa --to 99", kOut + "/bad5.gif"},
      {"--export-gif " + kOut + "/bad6.gif --panel decode --scenario decode-gqa --from x", kOut + "/bad6.gif"},
      {"--export-frames " + kOut + "/bad7 --panel decode --scenario default", kOut + "/bad7"},
      {"--export " + kOut + "/pipeline.svg --panel pipeline", kOut + "/pipeline.svg"},
      // 1200 frames of 7680 x 4320 held for one palette: 199 GB, refused before any is drawn
      {"--export-gif " + kOut + "/huge.gif --from q_proj --to q_heads --fps 50 --seconds 24 --size 7680x4320",
       kOut + "/huge.gif"},
      {"--export " + kOut + "/controls.png --slide --panel controls", kOut + "/controls.png"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    fs::remove_all(c.file);
    const std::string out = output_of(kApp + " " + c.args + " 2>&1 >/dev/null; echo rc=$?");
    CHECK(out.find("rc=2") != std::string::npos);
    // One line of complaint before the usage text (the usage follows only argument errors).
    CHECK(out.rfind("attnsim: ", 0) == 0);
    CHECK(count(out.substr(0, std::min(out.find("usage:"), out.find("rc="))), "\n") == 1);
    CHECK_FALSE(fs::exists(c.file));
  }
}

TEST_CASE("the sampling chart and the whole-model overview export as SVG, PDF and PNG, Korean searchable") {
  const std::string svg = kOut + "/sampling.svg", pdf = kOut + "/overview.pdf", png = kOut + "/overview.png";
  REQUIRE(run("--export " + svg + " --panel sampling --temperature 1.2 --top-k 8 --top-p 0.9 --seed 3") == 0);
  CHECK(std::system(("xmllint --noout " + svg).c_str()) == 0);
  const std::string s = read_file(svg);
  CHECK(s.find("← chosen") != std::string::npos);
  CHECK(s.find("temperature 1.20") != std::string::npos);
  REQUIRE(run("--export " + pdf + " --panel overview --lang ko") == 0);
  CHECK(pdf_pages(pdf) == 1);
  const std::string text = output_of("pdftotext " + pdf + " -");
  CHECK(text.find("어텐션") != std::string::npos);
  CHECK(text.find("잔차 스트림") != std::string::npos);
  REQUIRE(run("--export " + png + " --panel overview --size 1920x1080") == 0);
  int w = 0, h = 0, n = 0;
  stbi_uc* px = stbi_load(png.c_str(), &w, &h, &n, 3);
  REQUIRE(px);
  stbi_image_free(px);
  CHECK((w == 1920 && h == 1080));
  // a bad sampling setting: one line, exit 2
  CHECK(output_of(kApp + " --export " + kOut + "/bad.svg --panel sampling --temperature 1 --top-p 0").find("--top-p") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(kOut + "/bad.svg"));
}

TEST_CASE("the sampling chart and the overview as GIFs: a temperature sweep, the stream walked block by block") {
  const std::string model = " --model " + kSource + "/assets/models/induction";  // 2 layers
  const std::string gif = kOut + "/whole.gif";
  int err = 0;
  REQUIRE(run("--export-gif " + gif + " --panel sampling --top-k 5 --fps 4 --seconds 2 --size 640x360" + model) == 0);
  GifFileType* g = DGifOpenFileName(gif.c_str(), &err);
  REQUIRE(g != nullptr);
  REQUIRE(DGifSlurp(g) == GIF_OK);
  CHECK(g->ImageCount == 8);  // fps x seconds temperatures
  CHECK(g->SWidth == 640);
  DGifCloseFile(g, &err);
  REQUIRE(run("--export-gif " + gif + " --panel overview --size 640x360" + model) == 0);
  g = DGifOpenFileName(gif.c_str(), &err);
  REQUIRE(g != nullptr);
  REQUIRE(DGifSlurp(g) == GIF_OK);
  CHECK(g->ImageCount == 4);  // the embedding, block 0, block 1, the logits
  DGifCloseFile(g, &err);
  // each stage draws more than the one before: the frames differ, the last is the whole slide
  const std::string frames = kOut + "/whole-frames";
  REQUIRE(run("--export-frames " + frames + " --force --panel overview --size 640x360" + model) == 0);
  std::vector<std::string> bytes;
  for (int i = 1; i <= 4; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/frame-%04d.png", i);
    std::ifstream in(frames + name, std::ios::binary);
    bytes.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    REQUIRE(!bytes.back().empty());
  }
  for (int i = 1; i < 4; ++i) CHECK(bytes[i] != bytes[i - 1]);
  const std::string whole = kOut + "/whole.png";
  REQUIRE(run("--export " + whole + " --panel overview --size 640x360" + model) == 0);
  std::ifstream in(whole, std::ios::binary);
  CHECK(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()) == bytes[3]);
}

TEST_CASE("the Lens tab as a slide: every stage's row, the head grid, and the parts adding up to the logit") {
  const std::string model = " --model " + kSource + "/assets/models/induction";  // 2 layers x 4 heads
  const std::string svg = kOut + "/lens.svg";
  REQUIRE(run("--export " + svg + " --panel lens" + model) == 0);
  const std::string text = read_file(svg);
  // the stages by their display names (step_names.h), the grid's heads and layers
  for (const char* stage : {">embedding<", ">block 0<", ">block 1<", ">H3<", ">L1<"}) CHECK(text.find(stage) != std::string::npos);
  // "logit X = the parts' sum X": the attribution is exact, so both figures print the same
  const size_t eq = text.find(" = the parts' sum ");
  REQUIRE(eq != std::string::npos);
  const size_t at = text.rfind(">logit ", eq);
  REQUIRE(at != std::string::npos);
  const std::string logit = text.substr(at + 7, eq - at - 7);
  const size_t sum_at = text.find("sum ", eq);
  REQUIRE(sum_at != std::string::npos);
  CHECK(text.substr(sum_at + 4, logit.size()) == logit);
  REQUIRE(run("--export " + kOut + "/lens-ko.png --panel lens --lang ko" + model) == 0);
}
