// The model view behind the app's model panel: the parts of a typed sequence, and on the
// shipped checkpoint (assets/models/induction, or $ATTNSIM_MODEL) what the scenarios show:
//   - knocking out the induction heads at least halves the accuracy on the repeated half
//   - the checkpoint picked on the run's timeline gives the head roles and scores that
//     `attnsim-cli heads --json` prints for that step
//   - a broken checkpoint throws one line naming the file, and the view keeps its model
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "views/model_view.h"
#include "engine/error.h"
#include "model/formats/checkpoint.h"
#include "model/training/tasks.h"

using namespace attnsim;
using namespace attnsim::app;

namespace {

// Without the shipped checkpoint (it lands with the model issue) these checks cannot run.
bool have_model() {
  if (std::filesystem::exists(default_model_dir() + "/model.json")) return true;
  WARN("no checkpoint at " << default_model_dir() << ": model view checks skipped");
  return false;
}

}  // namespace

TEST_CASE("a typed sequence's targets are 'repeated' where the current token occurred before") {
  // ^ a b c a b c: positions 1..3 see a first occurrence, 4 and 5 a repeat, 6 is the last.
  const std::vector<uint8_t> p = sequence_parts({0, 1, 2, 3, 1, 2, 3});
  REQUIRE(p == std::vector<uint8_t>{model::kOther, model::kFirst, model::kFirst, model::kFirst, model::kRepeat,
                                    model::kRepeat, model::kOther});
}

TEST_CASE("model-ablate-induction: knocking out the induction heads halves repeated-half accuracy") {
  if (!have_model()) return;
  ModelView v;
  v.load(default_model_dir());
  v.repeated_random(16, 7);  // what the scenario opens on: BOS + r + r, r of 16 tokens
  const auto induction = v.heads_with_role("induction");
  REQUIRE_FALSE(induction.empty());
  const double before = v.base().stats.parts[model::kRepeat].accuracy();
  REQUIRE(v.base().stats.parts[model::kRepeat].count == 15);  // the second copy; its last token predicts nothing
  REQUIRE(before >= 0.9);  // a trained induction model copies the second copy almost perfectly
  for (bool mean : {false, true}) {
    v.set_mean_ablation(mean);
    v.set_ablated(induction);
    const double after = v.ablated().stats.parts[model::kRepeat].accuracy();
    INFO("mean ablation " << mean << ": repeated accuracy " << before << " -> " << after);
    REQUIRE(after <= before / 2);
    REQUIRE(v.ablated().stats.parts[model::kRepeat].loss() > v.base().stats.parts[model::kRepeat].loss());
  }
  // Restoring the heads gives back the numbers as trained.
  v.set_ablated({});
  REQUIRE(v.shown().stats.parts[model::kRepeat].accuracy() == before);
}

// `attnsim-cli heads --model DIR --json`, parsed.
nlohmann::json cli_heads(const std::string& dir) {
  const std::string out = (std::filesystem::temp_directory_path() / "attnsim-app-test-heads.json").string();
  const std::string cmd = std::string(ATTNSIM_CLI) + " heads --json --model '" + dir + "' > '" + out + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  nlohmann::json j;
  std::ifstream(out) >> j;
  return j;
}

TEST_CASE("the timeline scrubber loads checkpoint k and the grid matches `attnsim-cli heads` at k") {
  if (!have_model()) return;
  ModelView v;
  v.load(default_model_dir());
  const auto steps = v.timeline();
  REQUIRE(steps.size() >= 2);  // the saved steps, then the final model
  // The first saved step, one in the middle and the final model (every step costs a CLI run).
  for (size_t k : {size_t{0}, steps.size() / 2, steps.size() - 1}) {
    v.load(steps[k]);
    const nlohmann::json heads = cli_heads(steps[k])["heads"];
    REQUIRE(static_cast<int64_t>(heads.size()) == v.roles().layers * v.roles().heads);
    for (const auto& h : heads) {
      const int64_t l = h["layer"], i = h["head"];
      INFO(steps[k] << " head " << l << "." << i);
      REQUIRE(v.role(l, i) == h["role"].get<std::string>());
      REQUIRE(v.roles().at(l, i).induction == Approx(h["induction"].get<double>()).margin(1e-6));
      REQUIRE(v.roles().at(l, i).previous == Approx(h["previous"].get<double>()).margin(1e-6));
      REQUIRE(v.roles().at(l, i).first == Approx(h["first"].get<double>()).margin(1e-6));
    }
    REQUIRE(v.timeline() == steps);  // a step folder knows its run
  }
}

TEST_CASE("a run that kept no checkpoints is its own timeline, so the Training tab finds its log") {
  // the shipped recall / gist runs keep none (and the page carries only induction's)
  const std::string run = model::shipped_models_dir() + "/gist-d64-h8-kv1-4k-s2";
  if (!std::filesystem::is_regular_file(run + "/model.json")) return;
  REQUIRE_FALSE(std::filesystem::exists(run + "/checkpoints"));
  ModelView v;
  v.load(run);
  CHECK(v.timeline() == std::vector<std::string>{run});
}

TEST_CASE("a broken checkpoint throws one line naming the file and the view keeps its model") {
  if (!have_model()) return;
  ModelView v;
  v.load(default_model_dir());
  const auto tokens = v.tokens();
  const std::string bad = (std::filesystem::temp_directory_path() / "attnsim-broken-model").string();
  std::filesystem::remove_all(bad);
  std::filesystem::copy(default_model_dir(), bad, std::filesystem::copy_options::recursive);
  std::ofstream(bad + "/model.json") << "{\"format\": \"attnsim-model\", \"version\": 1, \"config\": ";
  try {
    v.load(bad);
    FAIL("a truncated model.json loaded");
  } catch (const Error& e) {
    const std::string what = e.what();
    REQUIRE(what.find("model.json") != std::string::npos);
    REQUIRE(what.find('\n') == std::string::npos);
  }
  REQUIRE(v.dir() == default_model_dir());
  REQUIRE(v.tokens() == tokens);
  std::filesystem::remove_all(bad);
}

TEST_CASE("typed text outside the alphabet or too long is refused and the sequence stays") {
  if (!have_model()) return;
  ModelView v;
  v.load(default_model_dir());
  const auto tokens = v.tokens();
  REQUIRE_THROWS_AS(v.set_text("naïve"), Error);
  REQUIRE_THROWS_AS(v.set_text(std::string(200, 'a')), Error);
  REQUIRE(v.tokens() == tokens);
  v.set_text("the cat sat. the cat sat.");
  REQUIRE(v.text() == "the cat sat. the cat sat.");
  REQUIRE(v.base().predictions.size() == 26);
}
