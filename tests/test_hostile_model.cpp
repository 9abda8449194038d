// Issue 24: hostile input on the model surfaces, one mechanism per class. The nesting bound
// every JSON / TOML read shares, the one number grammar and its ranges, memory predicted from
// sizes alone, non-finite forwards refused by name, and train --out staged as a whole run.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "engine/checked.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "engine/nesting.h"
#include "helpers.h"
#include "model/experiments/ablate.h"
#include "model/formats/checkpoint.h"
#include "model/training/heads.h"
#include "model/training/memory.h"
#include "model/training/train.h"

using namespace attnsim;
namespace fs = std::filesystem;

TEST_CASE("nesting: the bound counts brackets outside strings and comments only", "[hostile][model]") {
  const std::string ok = std::string(kMaxNesting, '[') + std::string(kMaxNesting, ']');
  CHECK_FALSE(too_deep(ok, Syntax::Json).has_value());
  const std::string over = "{\"a\": " + std::string(kMaxNesting + 1, '[');
  REQUIRE(too_deep(over, Syntax::Json).has_value());
  CHECK(*too_deep(over, Syntax::Json) == 6 + kMaxNesting - 1);  // the bracket that opens level 129
  // inside strings (with an escaped quote) brackets are text
  CHECK_FALSE(too_deep("[\"\\\"" + std::string(1000, '[') + "\"]", Syntax::Json).has_value());
  // TOML: literal and triple-quoted strings and comments hide brackets; a closed level counts once
  CHECK_FALSE(too_deep("a = '" + std::string(500, '[') + "'\n# " + std::string(500, '{') + "\nb = \"\"\"x\"" +
                           std::string(500, '[') + "\"\"\"\n[[step]]\n[[step]]\n",
                       Syntax::Toml).has_value());
  CHECK(too_deep("x = " + std::string(200, '{'), Syntax::Toml).value() == 4 + kMaxNesting);
}

TEST_CASE("nesting: a 200,000-deep model.json is one Error, not a stack overflow", "[hostile][model]") {
  const fs::path d = fs::temp_directory_path() / ("attnsim-deep-" + std::to_string(getpid()));
  fs::create_directories(d);
  std::ofstream(d / "model.json") << "{\"format\": \"attnsim-model\", \"version\": 1, \"config\": "
                                  << std::string(200000, '[');
  try {
    (void)model::load_checkpoint(d.string());
    FAIL("loaded");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("nested more than 128 levels deep (at byte 179)"));  // 51 + 128
  }
  CHECK_THROWS_WITH(parse_json("[1, 2", "x.json"), Catch::StartsWith("x.json: not valid JSON"));
  CHECK(parse_json("{\"a\": [[1]]}", "x.json")["a"][0][0] == 1);
  fs::remove_all(d);
}

TEST_CASE("numbers: one grammar for reals, seeds refused rather than wrapped", "[hostile][model]") {
  CHECK(parse_real("1e-3", "lr", model::kLrRange) == Approx(0.001));
  CHECK(parse_real("0.5", "lr", model::kLrRange) == 0.5);
  CHECK(parse_real("0", "clip", model::kClipRange) == 0.0);
  for (const char* bad : {"", " 0.1", "+0.1", "nan", "inf", "-inf", "0x1p-3", "1e", "1.", ".5", "1e400", "0.1 "})
    CHECK_THROWS_AS(parse_real(bad, "lr", model::kLrRange), Error);
  CHECK_THROWS_WITH(parse_real("-1", "lr", model::kLrRange), "lr -1 is out of range (above 0, at most 1)");
  CHECK_THROWS_WITH(parse_real("0", "lr", model::kLrRange), Catch::Contains("out of range"));  // 0 is not "not given"
  CHECK_THROWS_AS(parse_real("1.5", "weight_decay", model::kWeightDecayRange), Error);
  CHECK(parse_seed("18446744073709551615", "seed") == UINT64_MAX);
  for (const char* bad : {"18446744073709551616", "-1", "", " 1", "1.5", "+1"}) CHECK_THROWS_AS(parse_seed(bad, "seed"), Error);
}

TEST_CASE("numbers: a checkpoint's recipe is held to the CLI's ranges", "[hostile][model]") {
  nlohmann::json meta = {{"train",
                          {{"tasks", {"induction"}}, {"min_repeat", 2}, {"max_repeat", 5}, {"batch", 8}, {"steps", 10},
                           {"lr", 0.001}, {"warmup", 1}, {"weight_decay", 0.01}, {"clip", 1.0}, {"data_seed", 1u}}}};
  REQUIRE(model::recipe_options(meta).has_value());
  CHECK(model::recipe_options(meta)->adamw.lr == Approx(0.001));
  meta["train"]["lr"] = -1;
  CHECK_THROWS_WITH(model::recipe_options(meta), Catch::Contains("lr -1 is out of range"));
  meta["train"]["lr"] = 0.001;
  meta["train"]["clip"] = -1;
  CHECK_THROWS_WITH(model::recipe_options(meta), Catch::Contains("clip -1 is out of range"));
}

TEST_CASE("ablate --heads: one strict grammar", "[hostile][model]") {
  model::ModelConfig c;  // 2 layers, 4 heads
  const auto heads = model::parse_heads("1.3,0.0,1.3", c);
  REQUIRE(heads.size() == 2);
  CHECK(heads[0] == model::HeadRef{1, 3});
  CHECK(heads[1] == model::HeadRef{0, 0});
  for (const char* bad : {"0.0,", "+0.+1", " 0.0", "0.0 ", "0.-1", "0..1", ".", "", ",0.0", "0.0,,1.1", "1", "2.0", "0.4"})
    CHECK_THROWS_AS(model::parse_heads(bad, c), Error);
}

TEST_CASE("memory: the vocabulary's terms are predicted, and the address-space cap is a limit", "[hostile][model]") {
  model::ModelConfig small, big;
  big.vocab = 1 << 20;
  // the logits (B,T,V) alone: exactly B·T·ΔV floats more
  CHECK(model::predict_forward_bytes(big, 64, 41) - model::predict_forward_bytes(small, 64, 41) ==
        int64_t(64) * 41 * ((1 << 20) - 65) * 4);
  model::TrainOptions t;
  t.batch = 4;
  t.task.len = 12;
  t.score_every = 0;
  const int64_t no_scoring = model::predict_train_bytes(big, t);
  t.score_every = 250;  // the scoring forward runs inside a step: 64 sequences of 41 tokens over 2^20 logits
  CHECK(model::predict_train_bytes(big, t) - no_scoring == model::predict_forward_bytes(big, 64, 41));
  CHECK(model::predict_report_bytes(big) > int64_t(256) * 48 * (1 << 20) * 4);  // evaluate_repeats' logits
  CHECK_THROWS_WITH(check_fits(2048, 1024, "this", "smaller"),
                    "this needs about 2.00 KiB (2,048 bytes), over the limit of 1.00 KiB (--mem-limit); smaller");
  rlimit old{};
  REQUIRE(getrlimit(RLIMIT_AS, &old) == 0);
  rlimit capped = old;
  capped.rlim_cur = rlim_t(64) << 30;
  if (old.rlim_max == RLIM_INFINITY || old.rlim_max >= capped.rlim_cur) {
    REQUIRE(setrlimit(RLIMIT_AS, &capped) == 0);
    const int64_t limit = effective_mem_limit(MhaConfig{});
    setrlimit(RLIMIT_AS, &old);
    CHECK(limit <= (int64_t(48) << 30));
  }
}

TEST_CASE("non-finite: finite weights that overflow end the forward, naming the first tensor", "[hostile][model]") {
  model::ModelConfig c;
  c.vocab = 17;
  c.seq_len = 12;
  c.d_model = 16;
  c.heads = 2;
  model::Model m = model::init_model(c);
  Tensor& w = m.params.get("layers.0.attn.W_Q.weight");
  for (int64_t i = 0; i < w.numel(); ++i) w.f32()[i] = 3e38f;
  const model::Batch b = model::ablation_batch(c);
  CHECK_THROWS_WITH(model::forward_finite(m, b), Catch::Contains("first non-finite tensor: layer_0/q_proj"));
  CHECK_THROWS_WITH(model::score_heads(m, model::scoring_batch(c)), Catch::Contains("layer_0/q_proj"));
  // the trainer's own forward carries the values on: it names the tensor with the step itself
  CHECK(count_nonfinite(model::forward(m, b).logits).nan > 0);
}

#ifdef ATTNSIM_CLI
using attnsim::test::run_cli;

namespace {
const std::string kTiny = "--vocab 17 --seq 12 --d-model 16 --heads 2 --min-repeat 3 --max-repeat 5 --batch 8 --score-every 0";
std::vector<std::string> names_in(const fs::path& d) {
  std::vector<std::string> n;
  if (fs::exists(d))
    for (const auto& e : fs::directory_iterator(d)) n.push_back(e.path().filename().string());
  std::sort(n.begin(), n.end());
  return n;
}
}  // namespace

TEST_CASE("cli: weights that overflow float32 are one line naming the tensor (exit 2)", "[hostile][model][cli]") {
  const fs::path d = fs::temp_directory_path() / ("attnsim-huge-w-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  const fs::path ship = fs::path(ATTNSIM_SOURCE_DIR) / "assets/models/induction";
  for (const auto& e : fs::directory_iterator(ship))
    if (e.is_regular_file()) fs::copy_file(e.path(), d / e.path().filename());
  model::Model m = model::load_checkpoint(d.string());
  Tensor& w = m.params.get("layers.0.attn.W_Q.weight");
  for (int64_t i = 0; i < w.numel(); ++i) w.f32()[i] = 3e38f;
  const fs::path bad = d / "bad";
  model::save_checkpoint(m, bad.string());
  for (const char* cmd : {"heads", "ablate", "decode --steps 2", "trace"}) {
    const auto r = run_cli(std::string(cmd) + " --model " + bad.string());
    INFO(cmd << " -> " << r.output);
    CHECK(r.code == 2);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK_THAT(r.output, Catch::Contains("non-finite") && Catch::Contains("layer_0/") &&
                             !Catch::Contains("nan"));
  }
  fs::remove_all(d);
}

TEST_CASE("train --out: new or empty, --force replaces the whole run, refusals leave nothing", "[hostile][model][cli]") {
  const fs::path root = fs::temp_directory_path() / ("attnsim-out-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "mine");
  std::ofstream(root / "mine" / "notes.txt") << "the user's file";
  const auto refused = run_cli("train " + kTiny + " --steps 2 --out " + (root / "mine").string());
  CHECK(refused.code == 2);
  CHECK_THAT(refused.output, Catch::Contains("not empty") && Catch::Contains("--force"));
  CHECK(names_in(root / "mine") == std::vector<std::string>{"notes.txt"});
  CHECK(names_in(root) == std::vector<std::string>{"mine"});  // no staging folder left
  // a first run with step checkpoints, then a --force rerun without them: nothing of the first stays
  const std::string run = (root / "run").string();
  REQUIRE(run_cli("train " + kTiny + " --steps 4 --checkpoint-every 2 --out " + run).code == 0);
  CHECK(names_in(root / "run" / "checkpoints") == std::vector<std::string>{"step-000002", "step-000004"});
  const auto again = run_cli("train " + kTiny + " --steps 3 --out " + run + " --force");
  INFO(again.output);
  REQUIRE(again.code == 0);
  CHECK_FALSE(fs::exists(root / "run" / "checkpoints"));
  CHECK(model::read_checkpoint_header(run).meta["step"] == 3);
  CHECK(names_in(root) == std::vector<std::string>{"mine", "run"});
  fs::remove_all(root);
}

TEST_CASE("train --out: a run killed at any point leaves the previous run or the new one, whole", "[hostile][model][cli]") {
  const fs::path root = fs::temp_directory_path() / ("attnsim-kill-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string out = (root / "run").string();
  REQUIRE(run_cli("train " + kTiny + " --steps 2 --out " + out).code == 0);
  std::mt19937 rng(24);
  int64_t previous = 2;
  int replaced = 0, kept = 0;
  for (int i = 0; i < 6; ++i) {
    const std::string steps = std::to_string(40 + i);  // each new run is told from the previous by its step
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      dup2(null, 1), dup2(null, 2);
      execl(ATTNSIM_CLI, ATTNSIM_CLI, "train", "--vocab", "17", "--seq", "12", "--d-model", "16", "--heads", "2",
            "--min-repeat", "3", "--max-repeat", "5", "--batch", "8", "--score-every", "0", "--steps", steps.c_str(),
            "--checkpoint-every", "1", "--force", "--out", out.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(5, 300)(rng)));
    kill(pid, i % 2 ? SIGINT : SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    // whichever it is, it is whole: the header and every parameter load, and its step
    // checkpoints are its own (the 2-step run had none)
    const model::Model m = model::load_checkpoint(out);
    const int64_t step = model::read_checkpoint_header(out).meta["step"];
    INFO("run " << i << ": step " << step << ", previous " << previous);
    CHECK((step == previous || step == 40 + i));
    (step == previous ? kept : replaced) += 1;
    CHECK(fs::exists(fs::path(out) / "checkpoints") == (step != 2));
    CHECK(names_in(root) == std::vector<std::string>{"run"});  // no staging folder, no step-N.tmp-PID
    previous = step;
  }
  CHECK(kept > 0);
  fs::remove_all(root);
}
#endif
