// The Experiments tab's figures (experiment_figure.h): every bar is the result's JSON value,
// signed where the experiment is (ablation), two charts where it has two (dk-sweep); the
// slide of a real run on the shipped checkpoint carries its conclusion; a result missing its
// fields is refused with a message, not drawn as zeros.
#include <catch2/catch.hpp>

#include <filesystem>
#include <variant>

#include "views/experiment_figure.h"
#include "views/model_view.h"
#include "views/slide_scenes.h"
#include "engine/error.h"
#include "figure/plot.h"
#include "figure/slide.h"

using namespace attnsim;
using namespace attnsim::app;
namespace fig = attnsim::figure;

namespace {

std::vector<const fig::Box*> bars(const fig::Figure& f, fig::Color fill) {
  std::vector<const fig::Box*> out;
  for (const auto& item : f.items)
    if (const auto* b = std::get_if<fig::Box>(&item); b && b->fill == fill) out.push_back(b);
  return out;
}

bool has_text(const fig::Figure& f, const std::string& s) {
  for (const auto& item : f.items)
    if (const auto* t = std::get_if<fig::Text>(&item); t && t->text == s) return true;
  return false;
}

}  // namespace

TEST_CASE("experiment figure: ablation bars are the accuracy changes, negatives hang below zero") {
  model::ExperimentResult r;
  r.name = "ablation";
  r.conclusion = {"%s of %s heads are nearly free to remove, critical: %s (zero ablation, one at a time; base repeat "
                  "accuracy %s%%)",
                  {"2", "3", "1", "100.0"}};
  r.json = nlohmann::json::array({{{"layer", 0}, {"head", 0}, {"delta_accuracy_points", -3.0}},
                                  {{"layer", 0}, {"head", 1}, {"delta_accuracy_points", -79.1}},
                                  {{"layer", 1}, {"head", 0}, {"delta_accuracy_points", 1.5}}});
  const fig::Figure f = experiment_view(r, Lang::En, "print", 1000);
  const auto b = bars(f, fig::rgb(0xD55E00));
  REQUIRE(b.size() == 3);
  // one scale for all: height per point equal, and the two negatives start where the positive ends
  const float unit = b[1]->rect.h / 79.1f;
  CHECK(b[0]->rect.h == Approx(3.0f * unit).epsilon(1e-4));
  CHECK(b[2]->rect.h == Approx(1.5f * unit).epsilon(1e-4));
  CHECK(b[0]->rect.y == Approx(b[2]->rect.bottom()).margin(1e-3));
  CHECK(has_text(f, "-79.1"));
  CHECK(has_text(f, "1.5"));
  CHECK(has_text(f, "0.1"));  // head names under the axis
  CHECK(fig::overlapping_texts(f).empty());
  // the conclusion, filled in Korean with the same numbers
  const std::string ko = experiment_conclusion(r, Lang::Ko);
  CHECK(ko.find("헤드 2개") != std::string::npos);
  CHECK(ko.find("100.0%") != std::string::npos);
}

TEST_CASE("experiment figure: dk-sweep draws entropy and loss side by side; a result missing a field is refused") {
  model::ExperimentResult r;
  r.name = "dk-sweep";
  r.conclusion = {"x", {}};
  r.json = nlohmann::json::array({{{"heads", 1}, {"entropy", 1.25}, {"loss", 2.0}},
                                  {{"heads", 8}, {"entropy", 1.75}, {"loss", 1.5}}});
  const fig::Figure f = experiment_view(r, Lang::En, "print", 1200);
  const auto entropy = bars(f, fig::rgb(0x0072B2)), loss = bars(f, fig::rgb(0xD55E00));
  REQUIRE(entropy.size() == 2);
  REQUIRE(loss.size() == 2);
  CHECK(entropy[1]->rect.h / entropy[0]->rect.h == Approx(1.75 / 1.25).epsilon(1e-4));
  CHECK(loss[1]->rect.h / loss[0]->rect.h == Approx(1.5 / 2.0).epsilon(1e-4));
  CHECK(entropy[1]->rect.right() < loss[0]->rect.x);  // entropy left, loss right
  CHECK(has_text(f, "h=8"));
  r.json[1].erase("loss");
  CHECK_THROWS_WITH(experiment_view(r, Lang::En, "print", 1200), "experiment result: no number 'loss'");
}

TEST_CASE("experiment slide: the sink experiment on the shipped checkpoint, with its conclusion as the caption") {
  // no folder named: the model the window opens (scenario_model_dir), as every model export
  if (!std::filesystem::exists(scenario_model_dir("") + "/model.json")) {
    WARN("no checkpoint: skipped");
    return;
  }
  const fig::Figure f = model_experiment_slide("sink", "", lessons::Lang::En, "print");
  CHECK(f.title == "experiment: sink");
  ModelView view;
  view.load(scenario_model_dir(""));
  const auto r = model::run_experiment("sink", experiment_options(view.model().config, view.dir(), 1));
  bool caption = false;
  for (const auto& item : f.items)
    if (const auto* t = std::get_if<fig::Text>(&item); t && t->role == "caption")
      caption = caption || experiment_conclusion(r, Lang::En).rfind(t->text.substr(0, 20), 0) == 0;
  CHECK(caption);
  CHECK(fig::overlapping_texts(f).empty());
  CHECK(fig::texts_outside(f).empty());
  CHECK_THROWS_WITH(model_experiment_slide("nope", "", lessons::Lang::En, "print"),
                    Catch::Matchers::StartsWith("unknown experiment 'nope'"));
}
