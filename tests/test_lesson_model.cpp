// model.* lesson quantities on the shipped checkpoints (assets/models): every field against
// the value `attnsim-cli heads` / `ablate` / `experiment streaming` print for the same model,
// and the refusals a lesson author meets (unknown checkpoint or step, missing head).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "engine/error.h"
#include "lessons/lesson.h"
#include "lessons/model_quantity.h"
#include "lessons/player.h"
#include "lessons/quantity.h"
#include "model/formats/checkpoint.h"

using namespace attnsim;
using namespace attnsim::lessons;

namespace {

double num(const ModelSettings& m, const std::string& field) {
  return std::get<double>(model_field(m, field));
}

ModelSettings head(int64_t layer, int64_t h) {
  ModelSettings m;
  m.layer = layer;
  m.head = h;
  return m;
}

ModelSettings at_step(int64_t step) {
  ModelSettings m;
  m.step = step;
  return m;
}

ModelSettings ablated(const std::string& heads) {
  ModelSettings m;
  m.ablate = heads;
  return m;
}

}  // namespace

TEST_CASE("model.* sizes and step of the shipped checkpoint", "[lessons][model]") {
  const ModelSettings m;
  CHECK(num(m, "step") == 3000);
  CHECK(num(m, "params") == 154945);  // 65·128 + 48·128 + 2·4·(128² + 128) + 128·65 + 65
  CHECK(num(m, "d_model") == 128);
  CHECK(num(m, "heads") == 4);
  CHECK(num(m, "layers") == 2);
  CHECK(num(m, "head_dim") == 32);
  CHECK(num(at_step(750), "step") == 750);
  CHECK(num(at_step(3000), "step") == 3000);  // the final model's own step: the run folder
}

TEST_CASE("model.* head scores and roles match attnsim-cli heads", "[lessons][model]") {
  CHECK(num(head(0, 0), "previous") == Approx(0.847).margin(1e-3));
  CHECK(num(head(0, 1), "previous") == Approx(0.988).margin(1e-3));
  CHECK(num(head(1, 0), "induction") == Approx(0.786).margin(1e-3));
  CHECK(num(head(1, 1), "induction") == Approx(0.837).margin(1e-3));
  CHECK(num(head(1, 2), "induction") == Approx(0.796).margin(1e-3));
  CHECK(num(head(1, 3), "induction") == Approx(0.895).margin(1e-3));
  CHECK(num(head(0, 3), "duplicate") == Approx(0.077).margin(1e-3));
  CHECK(num(head(1, 0), "first") == Approx(0.576).margin(1e-3));
  CHECK(std::get<std::string>(model_field(head(0, 1), "role")) == "previous-token");
  CHECK(std::get<std::string>(model_field(head(1, 3), "role")) == "induction");
  CHECK(std::get<std::string>(model_field(head(0, 2), "role")) == "mixed");
  CHECK(num(ModelSettings{}, "best_previous") == Approx(0.988).margin(1e-3));
  CHECK(num(ModelSettings{}, "best_induction") == Approx(0.895).margin(1e-3));
  ModelSettings role;
  role.role = "induction";
  CHECK(num(role, "role_count") == 4);
  role.role = "previous-token";
  CHECK(num(role, "role_count") == 2);
  CHECK(num(head(1, 3), "layer") == 1);
  CHECK(num(head(1, 3), "head") == 3);
}

TEST_CASE("model.* accuracy and loss, intact and ablated, match attnsim-cli ablate", "[lessons][model]") {
  const ModelSettings intact;
  CHECK(num(intact, "repeat_accuracy") == Approx(1.0).margin(5e-4));
  CHECK(num(intact, "repeat_loss") == Approx(0.0160).margin(1e-4));
  CHECK(num(intact, "first_loss") == Approx(4.2724).margin(1e-4));
  const ModelSettings cut = ablated("1.0,1.1,1.2,1.3");
  CHECK(num(cut, "repeat_accuracy") == Approx(0.012).margin(1e-3));
  CHECK(num(cut, "repeat_loss") == Approx(4.1913).margin(1e-4));
  CHECK(num(cut, "first_loss") == Approx(4.1967).margin(1e-4));
  CHECK(num(cut, "repeat_accuracy_drop") == Approx(0.988).margin(1e-3));
  CHECK(num(cut, "repeat_loss_rise") == Approx(4.1754).margin(1e-4));
  CHECK(num(ablated("0.1"), "repeat_accuracy") == Approx(0.209).margin(1e-3));
  CHECK(num(ablated("1.1"), "repeat_accuracy") == Approx(1.0).margin(5e-4));
  CHECK_THROWS_AS(model_field(intact, "repeat_accuracy_drop"), Error);  // needs `ablate`
  CHECK_THROWS_AS(model_field(ablated("2.0"), "repeat_accuracy"), Error);  // no layer 2
}

TEST_CASE("model.* held-out lengths, the phase change and the training steps", "[lessons][model]") {
  ModelSettings len;
  len.repeat = 10;
  CHECK(num(len, "length_accuracy") == Approx(0.998).margin(1e-3));
  CHECK(num(len, "repeat") == 10);
  CHECK(num(ModelSettings{}, "unseen_accuracy") == Approx(0.992).margin(1e-3));
  CHECK(num(ModelSettings{}, "phase_change_step") == 675);  // the log scores every 25 steps
  // the log's finer record: layer 0's previous-token head rises before layer 1's induction head
  ModelSettings log;
  log.step = 600;
  log.layer = 0;
  CHECK(num(log, "log_previous") == Approx(0.257).margin(1e-3));
  log.layer = 1;
  CHECK(num(log, "log_induction") == Approx(0.043).margin(1e-3));
  log.step = 675;
  CHECK(num(log, "log_induction") == Approx(0.598).margin(1e-3));
  log.layer.reset();
  CHECK(num(log, "log_previous") == Approx(0.664).margin(1e-3));  // every layer: layer 0's
  log.step = 610;  // not a logged step
  CHECK_THROWS_AS(model_field(log, "log_previous"), Error);
  // the log's scores at 500 and 750 (train_log.jsonl), recomputed on the saved checkpoints
  CHECK(num(at_step(500), "best_induction") == Approx(0.0236).margin(1e-3));
  CHECK(num(at_step(500), "best_previous") == Approx(0.1358).margin(1e-3));
  CHECK(num(at_step(750), "best_induction") == Approx(0.8292).margin(1e-3));
  CHECK(num(at_step(750), "best_previous") == Approx(0.8294).margin(1e-3));
  CHECK(num(at_step(500), "repeat_accuracy") < 0.1);
  CHECK(num(at_step(750), "repeat_accuracy") > 0.85);
}

TEST_CASE("model.* streaming: evicting BOS raises the late loss", "[lessons][model]") {
  const ModelSettings m;
  CHECK(num(m, "late_loss_full") == Approx(2.76).margin(0.005));
  CHECK(num(m, "late_loss_window") == Approx(4.99).margin(0.005));
  CHECK(num(m, "late_loss_sink") < 3.5);
}

TEST_CASE("model.* refuses what names nothing, with one line", "[lessons][model]") {
  ModelSettings m;
  m.checkpoint = "no-such-model";
  CHECK_THROWS_WITH(model_field(m, "params"), Catch::Contains("no shipped checkpoint 'no-such-model'"));
  m.checkpoint = "../induction";
  CHECK_THROWS_WITH(model_field(m, "params"), Catch::Contains("folder name under assets/models/"));
  CHECK_THROWS_WITH(model_field(at_step(600), "params"), Catch::Contains("step-000500"));
  CHECK_THROWS_WITH(model_field(ModelSettings{}, "induction"), Catch::Contains("layer and head"));
  CHECK_THROWS_WITH(model_field(head(1, 4), "induction"), Catch::Contains("outside the model"));
  std::string why;
  CHECK(is_known_quantity("model.best_induction", &why));
  CHECK_FALSE(is_known_quantity("model.nope", &why));
  CHECK(why.find("model.* fields") != std::string::npos);
}

TEST_CASE("a claim's model table is read from a lesson", "[lessons][model]") {
  const std::string text = R"(format = 2
id = "m"
order = 1
title = { ko = "모델", en = "Model" }
summary = { ko = "모델", en = "Model" }
[scenario]
preset = "default"
[[step]]
id = "s"
title = { ko = "모델", en = "Model" }
panel = "model"
text.ko = "헤드 {value:model.layer@ind}.{value:model.head@ind}: {value:ind|.2f}"
text.en = "head {value:model.layer@ind}.{value:model.head@ind}: {value:ind|.2f}"
[[step.claim]]
id = "ind"
quantity = "model.induction"
model = { checkpoint = "induction", layer = 1, head = 3 }
at_least = 0.85
)";
  LoadResult r = load_lesson_text(text, "m.toml");
  REQUIRE(r.diagnostics.empty());
  REQUIRE(r.lesson);
  check_lesson(*r.lesson, r.diagnostics);
  CHECK(r.diagnostics.empty());
  CHECK(r.lesson->steps[0].text.en == "head 1.3: 0.89");
  CHECK(r.lesson->steps[0].text.ko == "헤드 1.3: 0.89");
}

TEST_CASE("model.* values kept on disk come back the same, and only when asked", "[lessons][model]") {
  const std::string file = "/tmp/attnsim-test-model-values-" + std::to_string(::getpid()) + ".json";
  std::remove(file.c_str());
  use_model_value_cache(file);
  const double computed = num(head(1, 3), "induction");
  std::ifstream in(file);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("|induction|") != std::string::npos);
  use_model_value_cache(file);  // a fresh start reads the file
  CHECK(num(head(1, 3), "induction") == computed);
  use_model_value_cache("");
  CHECK(num(head(1, 3), "induction") == computed);
  std::remove(file.c_str());
}

TEST_CASE("a value cache that is a FIFO or /dev/zero is passed over, not read (issue 37)", "[lessons][model]") {
  const std::string dir = "/tmp/attnsim-test-cache-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string fifo = dir + "/fifo.json", zero = dir + "/zero.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::filesystem::create_symlink("/dev/zero", zero);
  const double computed = num(head(1, 3), "induction");
  for (const std::string& file : {fifo, zero}) {
    use_model_value_cache(file);  // returns at once: a plain stream blocked on the FIFO, and
                                  // grew past 2 GB on /dev/zero
    CHECK(num(head(1, 3), "induction") == computed);  // computed, and not written over the FIFO
  }
  CHECK(std::filesystem::is_fifo(fifo));
  CHECK(std::filesystem::is_symlink(zero));
  use_model_value_cache("");
  std::filesystem::remove_all(dir);
}

TEST_CASE("model.* values on disk are keyed by the shipped name and model.json's content, not the path or time",
          "[lessons][model]") {
  // The page unpacks its checkpoints (new path, new times) and reads values computed from
  // the source tree: the same run must find them, a changed run must not.
  namespace fs = std::filesystem;
  const fs::path tmp = fs::temp_directory_path() / ("attnsim-test-value-keys-" + std::to_string(::getpid()));
  const std::string file = (tmp / "values.json").string();
  fs::create_directories(tmp / "a");
  fs::copy(model::shipped_models_dir() + "/induction", tmp / "a" / "induction", fs::copy_options::recursive);
  const std::string before = std::getenv("ATTNSIM_MODELS") ? std::getenv("ATTNSIM_MODELS") : "";
  ::setenv("ATTNSIM_MODELS", (tmp / "a").c_str(), 1);
  use_model_value_cache(file);
  const double computed = num(head(1, 3), "induction");
  std::ifstream in(file);
  nlohmann::json cache = nlohmann::json::parse(in);
  REQUIRE(cache.size() == 1);
  const std::string key = cache.begin().key();
  CHECK(key.rfind("v3|shipped/induction|", 0) == 0);
  CHECK(key.find(tmp.string()) == std::string::npos);
  // a copy elsewhere, with new file times, finds the value (planted, to tell it from a recompute)
  fs::create_directories(tmp / "b");
  fs::copy(tmp / "a" / "induction", tmp / "b" / "induction", fs::copy_options::recursive);
  ::setenv("ATTNSIM_MODELS", (tmp / "b").c_str(), 1);
  cache[key] = 123.5;
  model::write_text_file(file, cache.dump());
  use_model_value_cache(file);
  CHECK(num(head(1, 3), "induction") == 123.5);
  // a run whose model.json says something else does not
  std::ofstream(tmp / "b" / "induction" / "model.json", std::ios::app) << "\n";
  use_model_value_cache(file);  // a new start (model.json is read once per start)
  CHECK(num(head(1, 3), "induction") == computed);
  use_model_value_cache("");
  if (before.empty()) ::unsetenv("ATTNSIM_MODELS");
  else ::setenv("ATTNSIM_MODELS", before.c_str(), 1);
  fs::remove_all(tmp);
}

// [SECTION] try-it tasks on the model panel

namespace {

std::string model_task_lesson(const std::string& task_model, const std::string& claim) {
  return R"(format = 2
id = "mt"
order = 1
title = { ko = "모델", en = "Model" }
summary = { ko = "모델", en = "Model" }
[scenario]
preset = "default"
[[step]]
id = "s"
title = { ko = "모델", en = "Model" }
panel = "model"
text.ko = "격자"
text.en = "grid"
[step.task]
prompt = { ko = "헤드 하나를 꺼 보자", en = "Knock out one head" }
done = { ko = "됐다", en = "Done" }
model = )" + task_model + R"(
[[step.task.claim]]
)" + claim + "\n";
}

}  // namespace

TEST_CASE("a model task: its goal is heads knocked out, its claims read the learner's ablation", "[lessons][model]") {
  LoadResult r = load_lesson_text(
      model_task_lesson(R"({ knock_out = 1, solution = "0.1" })", "quantity = \"model.repeat_accuracy\"\nat_most = 0.5"),
      "mt.toml");
  REQUIRE(r.diagnostics.empty());
  REQUIRE(r.lesson);
  const Task& task = *r.lesson->steps[0].task;
  REQUIRE(task.model_goal);
  CHECK(task.model_goal->knock_out == 1);
  check_lesson(*r.lesson, r.diagnostics);
  for (const auto& d : r.diagnostics) INFO(d.str());
  CHECK(r.diagnostics.empty());

  LiveState live;  // the engine scenario: no model on screen
  std::string why;
  CHECK_FALSE(goal_reached(task, live, &why));
  CHECK(why == "the model panel is closed, the task asks for open");
  live.model = true;
  live.ablated = "1.0,1.1";
  live.knocked_out = 2;
  CHECK_FALSE(goal_reached(task, live, &why));
  CHECK(why == "heads knocked out is 2, the task asks for 1");
  live.ablated = "1.1";
  live.knocked_out = 1;
  live.mean_ablation = true;
  CHECK_FALSE(goal_reached(task, live, &why));
  live.mean_ablation = false;
  REQUIRE(goal_reached(task, live, &why));

  // The claim follows the learner: an induction head alone keeps 100 %, the previous-token
  // head 0.1 alone takes the repeats to 20.9 % (attnsim-cli ablate prints the same).
  Evaluator eval;
  const Claim& c = task.claims[0];
  CHECK(live_claim(task, c, live).model.ablate == std::optional<std::string>("1.1"));
  CHECK_FALSE(eval.holds(live_claim(task, c, live), settings_of(live), &why));
  live.ablated = "0.1";
  CHECK(eval.holds(live_claim(task, c, live), settings_of(live), &why));
  CHECK(std::get<double>(eval.evaluate(live_claim(task, c, live), settings_of(live))) == Approx(0.209).margin(1e-3));
  CHECK(head_count("0.1,1.3") == 2);
  CHECK(head_count("") == 0);
}

TEST_CASE("lesson check refuses a model task that cannot be done or is done before trying", "[lessons][model]") {
  auto problems = [](const std::string& model, const std::string& claim) {
    LoadResult r = load_lesson_text(model_task_lesson(model, claim), "mt.toml");
    if (r.lesson) check_lesson(*r.lesson, r.diagnostics);
    std::string all;
    for (const auto& d : r.diagnostics) all += d.str() + "\n";
    return all;
  };
  const std::string below_half = "quantity = \"model.repeat_accuracy\"\nat_most = 0.5";
  // An induction head alone does not do it.
  CHECK_THAT(problems(R"({ knock_out = 1, solution = "1.1" })", below_half),
             Catch::Contains("task claim (solution 1.1): model.repeat_accuracy"));
  // The solution knocks out two heads for a one-head goal.
  CHECK_THAT(problems(R"({ knock_out = 1, solution = "0.1,0.0" })", below_half),
             Catch::Contains("the solution '0.1,0.0' knocks out 2 heads, the goal asks for 1"));
  // Claims that hold with nothing knocked out: the task would be done before the learner acts.
  CHECK_THAT(problems(R"({ knock_out = 1, solution = "0.1" })", "quantity = \"model.repeat_accuracy\"\nat_most = 1.0"),
             Catch::Contains("its claims already hold with no head knocked out"));
  // A model task's claims are model.* quantities that take the learner's heads.
  CHECK_THAT(problems(R"({ knock_out = 1, solution = "0.1" })",
                      "quantity = \"model.repeat_accuracy\"\nmodel = { ablate = \"0.1\" }\nat_most = 0.5"),
             Catch::Contains("remove its ablate"));
  CHECK_THAT(problems(R"({ knock_out = 0, solution = "" })", below_half), Catch::Contains("knock_out must be at least 1"));
}
