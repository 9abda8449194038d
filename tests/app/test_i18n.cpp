// The UI text table (i18n.cpp) and the model and flash panels' use of it: every tr()/trf() literal in
// those files has a Korean entry, no widget there takes an untranslated English literal, and
// every Korean printf format keeps its English placeholders in the same order.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "views/i18n.h"
#include "views/model_view.h"
#include "engine/error.h"
#include "model/experiments/experiments.h"
#include "model/training/heads.h"

using namespace attnsim::app;

namespace {

const char* const kModelFiles[] = {"src/app/panel_model.cpp", "src/app/panel_timeline.cpp",
                                   "src/app/panel_experiments.cpp", "src/views/model_view.cpp",
                                   "src/app/panel_decode.cpp", "src/views/experiment_figure.cpp",
                                   "src/app/panel_flash.cpp", "src/app/panel_hf.cpp", "src/views/hf_view.cpp",
                                   "src/app/panel_whole.cpp", "src/views/sampling_figure.cpp",
                                   "src/views/head_names.cpp", "src/app/panel_start.cpp", "src/app/panel_about.cpp",
                                   "src/app/panel_menu.cpp", "src/app/panel_pipeline.cpp", "src/app/panel_controls.cpp",
                                   "src/app/panel_memory.cpp", "src/app/panel_buglab.cpp", "src/app/export_status.cpp"};

std::string read_source(const std::string& rel) {
  std::ifstream in(std::string(ATTNSIM_SOURCE_DIR) + "/" + rel);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Text a reader sees: the literal without its placeholders and without an ImGui "##id" tail.
bool has_words(std::string s) {
  s = s.substr(0, s.find("##"));
  for (const std::string& p : placeholders(s)) s.erase(s.find(p), p.size());
  return std::regex_search(s, std::regex("[A-Za-z]{2,}"));
}

struct LangGuard {
  Lang was = ui_lang();
  ~LangGuard() { ui_lang() = was; }
};

}  // namespace

TEST_CASE("placeholders lists a printf format's conversions in order") {
  REQUIRE(placeholders("step %lld, loss %.3f, %.0f%% of %s") ==
          std::vector<std::string>{"%lld", "%.3f", "%.0f", "%s"});
  REQUIRE(placeholders("100%% plain").empty());
  REQUIRE(placeholders("%-8.2e|%5d") == std::vector<std::string>{"%-8.2e", "%5d"});
}

TEST_CASE("every Korean entry keeps the English placeholders and ImGui id, and no English key repeats") {
  std::set<std::string> seen;
  for (const auto& [en, ko] : translations()) {
    INFO(en << " -> " << ko);
    CHECK(seen.insert(en).second);  // a second entry for the same English is never used
    CHECK(placeholders(en) == placeholders(ko));
    const auto id = [](const std::string& s) { return s.find("##") == std::string::npos ? "" : s.substr(s.find("##")); };
    CHECK(id(en) == id(ko));
    CHECK(ko != en);
  }
}

TEST_CASE("trf formats the Korean format with the same arguments, English when the language is English") {
  LangGuard guard;
  ui_lang() = Lang::En;
  REQUIRE(trf("step %lld, loss %.3f, %.0f s", 1200LL, 0.25, 41.6) == "step 1200, loss 0.250, 42 s");
  ui_lang() = Lang::Ko;
  REQUIRE(trf("step %lld, loss %.3f, %.0f s", 1200LL, 0.25, 41.6) == "스텝 1200, 손실 0.250, 42초");
  REQUIRE(trf("head %lld.%lld knocked out: recomputed in %d ms", 1LL, 3LL, 7) == "헤드 1.3 끔: 7 ms 만에 다시 계산");
  REQUIRE(std::string(tr("previous-token")) == "앞 토큰");
  REQUIRE(std::string(tr("not in the table at all")) == "not in the table at all");
}

TEST_CASE("the model and flash panels: every tr()/trf() literal has Korean and no widget takes a bare English literal") {
  LangGuard guard;
  ui_lang() = Lang::Ko;
  // tr("..."), trf("...") and tr_in(lang, "...") (a figure in a given language)
  const std::regex call(R"re(\b(?:trf?\(|tr_in\(\s*\w+\s*,)\s*"((?:[^"\\]|\\.)*)")re");
  // Widgets and draw calls whose first text argument is shown as is.
  const std::regex widget(
      R"re(\b(?:ImGui::(?:Text|TextDisabled|TextWrapped|TextUnformatted|Button|SmallButton|Checkbox|RadioButton|TableSetupColumn|BeginTabItem|SliderInt|InputText|InputInt|InputInt4|InputFloat|TreeNode)|bars|plot|row|top3)\(\s*"((?:[^"\\]|\\.)*)")re");
  const std::regex draw(R"re(AddText\([^;]*?,\s*"((?:[^"\\]|\\.)*)"\s*\))re");
  for (const char* file : kModelFiles) {
    const std::string src = read_source(file);
    int found = 0;
    for (auto it = std::sregex_iterator(src.begin(), src.end(), call); it != std::sregex_iterator(); ++it) {
      const std::string en = (*it)[1];
      INFO(file << ": tr(\"" << en << "\")");
      CHECK(std::string(tr(en.c_str())) != en);
      ++found;
    }
    INFO(file);
    CHECK(found >= 3);  // the scan sees the file's strings (it would pass vacuously otherwise)
    for (const std::regex* re : {&widget, &draw})
      for (auto it = std::sregex_iterator(src.begin(), src.end(), *re); it != std::sregex_iterator(); ++it) {
        INFO(file << ": untranslated literal \"" << (*it)[1] << "\"");
        CHECK_FALSE(has_words((*it)[1]));
      }
  }
}

TEST_CASE("every experiment conclusion has Korean with the same %s values, and the numbers stay computed") {
  LangGuard guard;
  ui_lang() = Lang::Ko;
  std::set<std::string> seen;
  for (const std::string& f : attnsim::model::conclusion_formats()) {
    INFO(f);
    CHECK(seen.insert(f).second);
    const std::string ko = tr(f.c_str());
    CHECK(ko != f);  // a Korean entry exists and kept the placeholders (else tr gives English)
    CHECK(placeholders(ko) == placeholders(f));
    CHECK(!std::regex_search(ko, std::regex("(^|[^%])%[^s%]")));  // only %s and %%
  }
  // fill_format: values in order, %% is a percent sign, a count mismatch is one clear error.
  REQUIRE(attnsim::model::fill_format("%s of %s (%s%%)", {"3", "8", "99.5"}) == "3 of 8 (99.5%)");
  REQUIRE_THROWS_WITH(attnsim::model::fill_format("%s of %s", {"3"}),
                      "conclusion pattern '%s of %s': more %s than its 1 values");
  REQUIRE_THROWS_WITH(attnsim::model::fill_format("%d", {"3"}),
                      "conclusion pattern '%d': only %s and %% are allowed");

  // A real run on the shipped checkpoint: the Korean line carries the English line's numbers.
  const std::string dir = default_model_dir();
  if (!std::filesystem::exists(dir + "/model.json")) {
    WARN("no checkpoint at " << dir << ": the sink run is skipped");
    return;
  }
  attnsim::model::ExperimentOptions o;
  o.model_dir = dir;
  const auto r = attnsim::model::run_experiment("sink", o);
  const std::string en = r.conclusion.text(), ko = tr_filled(r.conclusion.format, r.conclusion.values);
  REQUIRE(r.conclusion.values.size() == 2);
  CHECK(en == r.conclusion.values[0] + " of " + r.conclusion.values[1] + " heads put at least half their weight on BOS");
  CHECK(ko == "헤드 " + r.conclusion.values[0] + "개가 가중치의 절반 이상을 BOS에 둔다 (전체 " + r.conclusion.values[1] +
                  "개)");
  int sinks = 0;
  for (const auto& row : r.json) sinks += row["first"].get<double>() >= attnsim::model::kFirstThreshold;
  CHECK(r.conclusion.values[0] == std::to_string(sinks));
  ui_lang() = Lang::En;
  CHECK(tr_filled(r.conclusion.format, r.conclusion.values) == en);
}

TEST_CASE("one Korean term per head role: the app's word is the lessons' and the slides', and 유도 is gone") {
  // The roles' Korean words live in the app's table; the slides take them from there
  // (model_slides.cpp role_word), the lessons write them out.
  REQUIRE(std::string(tr_in(Lang::Ko, "induction")) == "인덕션");
  REQUIRE(std::string(tr_in(Lang::Ko, "previous-token")) == "앞 토큰");
  REQUIRE(std::string(tr_in(Lang::En, "induction")) == "induction");
  const std::string head = std::string(tr_in(Lang::Ko, "induction")) + " 헤드", named = head + "(induction head)";
  for (const char* rel : {"lessons/01-one-budget.toml", "lessons/11-heads-up-close.toml",
                          "lessons/14-watching-a-head-form.toml", "lessons/15-one-head-or-many.toml"}) {
    INFO(rel);
    const std::string text = read_source(rel);
    // The first mention names the English term once; the lesson then says the Korean one.
    const size_t first = text.find(head);
    REQUIRE(first != std::string::npos);
    CHECK(text.compare(first, named.size(), named) == 0);
  }
  for (const auto& e : std::filesystem::directory_iterator(std::string(ATTNSIM_SOURCE_DIR) + "/lessons")) {
    if (e.path().extension() != ".toml") continue;
    INFO(e.path().string());
    CHECK(read_source("lessons/" + e.path().filename().string()).find("유도") == std::string::npos);
  }
  for (const char* rel : {"src/views/i18n.cpp", "src/views/model_slides.cpp", "src/views/slide_scenes.cpp",
                          "src/engine/scenario.cpp"}) {
    INFO(rel);
    CHECK(read_source(rel).find("유도") == std::string::npos);
  }
}
