// Every lesson's deck, in Korean and English, built in this process from the figure model the
// PNG, SVG and PDF sinks draw (slide_scenes.h lesson_deck):
//   - each step's page shows the figure its step opens (Figure::kind against the step's panel
//     and action, read off the lesson file here, not off the slide code): a step that opens the
//     Lens tab gets the lens, not the head grid;
//   - no text of any page is cut: each one measured with the sinks' font metrics (NanumGothic
//     advances, text_metrics.h) against the room its layout gave it and against the page, and
//     none shortened with "…";
//   - no page prints a path.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "views/slide_scenes.h"
#include "figure/slide.h"
#include "figure/text_metrics.h"
#include "lessons/lesson.h"
#include "lessons/markup.h"
#include "lessons/model_quantity.h"

namespace fs = std::filesystem;
namespace fig = attnsim::figure;
using attnsim::lessons::Lang;

namespace {

const std::string kSource = ATTNSIM_SOURCE_DIR;

std::vector<std::string> lesson_paths() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kSource + "/lessons"))
    if (e.path().extension() == ".toml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// What the app opens for a step (panel_lesson.cpp, lessons/FORMAT.md "Step fields for the
// view"), as the kind of figure its slide must be.
std::string expected_kind(const attnsim::lessons::LessonStep& st) {
  if (st.panel == "model") {
    if (st.action == "open-lens") return "lens";
    if (st.action == "open-overview") return "overview";
    if (st.action == "open-sampling") return "sampling";
    // claims over several checkpoints (one head against eight): the models side by side
    return st.action.empty() && attnsim::lessons::step_model_dirs(st).size() > 1 ? "compare" : "head-grid";
  }
  if (st.panel == "timeline") return "timeline";
  if (st.panel == "decode") return "decode";
  if (st.panel == "memory") return "memory";
  if (st.panel == "buglab") return "buglab";
  if (st.panel == "cost") return "cost";
  if (st.panel == "flash") {
    // a step about the IO model states its figures; one about the tiles walks them
    const bool io = std::any_of(st.claims.begin(), st.claims.end(),
                                [](const auto& c) { return c.quantity.rfind("flash.", 0) == 0; });
    return io ? "cost" : "flash";
  }
  return "tensor";  // tensor, pipeline, controls, lesson: the step's tensor
}

std::string describe(const fig::Text& t) {
  char b[160];
  std::snprintf(b, sizeof b, " (%.0f wide at %.0f, room %.0f, at %.0f,%.0f)", fig::text_width(t.text, t.size, t.bold),
                t.size, t.room, t.x, t.y);
  return "\"" + t.text + "\"" + b;
}

}  // namespace

TEST_CASE("every lesson deck, ko and en: each page the figure its step opens, every label whole, no path") {
  const auto paths = lesson_paths();
  REQUIRE(paths.size() >= 18);
  std::vector<std::string> wrong_kind, cut, with_path;
  size_t pages = 0, texts = 0;
  for (const std::string& path : paths) {
    const auto loaded = attnsim::lessons::load_lesson(path);
    REQUIRE(loaded.lesson);
    const auto& lesson = *loaded.lesson;
    REQUIRE(lesson.fill_problems.empty());
    for (const Lang lang : {Lang::En, Lang::Ko}) {
      const std::string where = fs::path(path).stem().string() + (lang == Lang::Ko ? " ko" : " en");
      INFO(where);
      const attnsim::app::Deck deck = attnsim::app::lesson_deck(lesson, lang, "print");
      REQUIRE(deck.pages.size() == lesson.steps.size() + 1);
      CHECK(deck.pages[0].figure.kind == "title");
      for (size_t i = 0; i < deck.pages.size(); ++i) {
        const fig::Figure& f = deck.pages[i].figure;
        const std::string page = where + " page " + std::to_string(i) + " (" + deck.pages[i].name + ")";
        ++pages;
        if (i > 0) {
          const auto& st = lesson.steps[i - 1];
          const std::string want = expected_kind(st);
          if (f.kind != want) wrong_kind.push_back(page + ": shows '" + f.kind + "', the step opens '" + want + "'");
          // the page's title is the step's, whole
          CHECK(f.title == attnsim::lessons::plain_text(attnsim::lessons::parse_markup(st.title.get(lang))));
        }
        for (size_t k : fig::texts_cut(f)) cut.push_back(page + ": " + describe(std::get<fig::Text>(f.items[k])));
        for (const auto& item : f.items)
          if (const auto* t = std::get_if<fig::Text>(&item)) {
            ++texts;
            if (t->text.find(kSource) != std::string::npos || t->text.find("/home/") != std::string::npos ||
                t->text.find("/assets/") != std::string::npos)
              with_path.push_back(page + ": " + t->text);
          }
      }
    }
  }
  auto joined = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += "\n  " + x;
    return s;
  };
  INFO(pages << " pages, " << texts << " texts");
  INFO("wrong figure:" << joined(wrong_kind));
  CHECK(wrong_kind.empty());
  INFO("cut or outside the page:" << joined(cut));
  CHECK(cut.empty());
  INFO("a path on a page:" << joined(with_path));
  CHECK(with_path.empty());
}

TEST_CASE("texts_cut finds a cut label, one wider than its room and one off the page, and passes a whole one") {
  fig::Figure f;
  const fig::Color ink{0, 0, 0, 1};
  fig::fitted_text(f, 10, 100, "fits", 28, 400, ink);
  fig::fitted_text(f, 10, 200, "dashed: uniform guess ln 64 = 4.16", 28, 120, ink);  // cut to its room
  f.text(10, 300, "previous-token 0.26", 28, ink).room = 50;                         // over its room
  f.text(1900, 400, "off the page", 28, ink);                                        // past the right edge
  f.text(10, 500, "ends cut…", 28, ink);
  const auto cut = fig::texts_cut(f);
  CHECK(cut == std::vector<size_t>{1, 2, 3, 4});
  CHECK(std::get<fig::Text>(f.items[1]).cut);
  CHECK(fig::text_width(std::get<fig::Text>(f.items[1]).text, 28) <= 120);
}
