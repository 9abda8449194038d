// decode.* lesson quantities on the trained model (decode-model, decode-model-sinks on the
// shipped checkpoint): the cache figures, and what eviction costs, against model::
// loss_by_position (its own decode, one row per call, its own logits) on the same tokens;
// a step's `policy`; and the refusals a lesson author meets.
#include <catch2/catch.hpp>

#include <string>

#include "engine/error.h"
#include "lessons/lesson.h"
#include "lessons/model_quantity.h"
#include "lessons/quantity.h"
#include "model/experiments/decode.h"
#include "model/training/tasks.h"
#include "model/text/tokenizer.h"

using namespace attnsim;
using namespace attnsim::lessons;

namespace {

Settings preset(const std::string& name, const std::string& policy = "") {
  Settings s;
  s.preset = name;
  if (!policy.empty()) s.policy = policy;
  return s;
}

double value(Evaluator& eval, const Settings& s, const std::string& quantity, const ModelSettings& m = {}) {
  Claim c;
  c.quantity = quantity;
  c.model = m;
  return std::get<double>(eval.evaluate(c, s));
}

// Mean over positions from..T-2 of model::loss_by_position on the scenario's one prompt.
double mean_loss(const std::string& policy, int64_t from) {
  const model::Model& m = loaded_model(model_dir_of(ModelSettings{}));
  const std::string text = find_scenario("decode-model-sinks").decode.prompts.at(0);
  const model::Batch batch = model::batch_from_tokens({model::encode(text, m.config.vocab)});
  const model::PositionLoss p = model::loss_by_position(m, batch, parse_cache_policy(policy));
  double sum = 0;
  for (size_t i = static_cast<size_t>(from); i < p.loss.size(); ++i) sum += p.loss[i];
  return sum / static_cast<double>(p.loss.size() - static_cast<size_t>(from));
}

}  // namespace

TEST_CASE("decode.* on decode-model-sinks: BOS and 47 characters through 16 slots of the trained model",
          "[lessons][model][decode]") {
  Evaluator eval;
  const Settings s = preset("decode-model-sinks");
  CHECK(value(eval, s, "decode.slots") == 16);
  CHECK(value(eval, s, "decode.sink") == 1);
  CHECK(value(eval, s, "decode.window") == 15);
  CHECK(value(eval, s, "decode.tokens") == 48);  // BOS + 47 characters
  CHECK(value(eval, s, "decode.t_max") == 48);
  CHECK(value(eval, s, "decode.layers") == 2);
  CHECK(value(eval, s, "decode.heads") == 4);
  CHECK(value(eval, s, "decode.head_dim") == 32);
  // 2 layers x K and V x 4 heads x 16 slots x 32 x 4 bytes, allocated once; what the cost model says
  CHECK(value(eval, s, "decode.storage_bytes") == 2 * 2 * 4 * 16 * 32 * 4);
  CHECK(value(eval, s, "decode.formula_bytes") == value(eval, s, "decode.storage_bytes"));
  CHECK(value(eval, s, "decode.max_diff_full") < 2e-5);
  CHECK(value(eval, s, "decode.loss_from") == 16);
  // The means the decode panel's legend prints (tests/app/test_decode_run.cpp draws the same
  // lines): keeping BOS holds the full cache's loss, a window of the same 16 slots loses 1.7 nats.
  const double full = value(eval, s, "decode.loss_full"), sink = value(eval, s, "decode.loss_policy"),
               window = value(eval, s, "decode.loss_window");
  CHECK(full == Approx(2.250).margin(0.005));
  CHECK(sink == Approx(2.288).margin(0.005));
  CHECK(window == Approx(3.952).margin(0.005));
  // the same numbers from loss_by_position's own decode, one token per call
  CHECK(full == Approx(mean_loss("full", 16)).margin(1e-4));
  CHECK(sink == Approx(mean_loss("sink=1,window=15", 16)).margin(1e-4));
  CHECK(window == Approx(mean_loss("window=16", 16)).margin(1e-4));
}

TEST_CASE("decode.bos_weight: the trained model's heads park weight on BOS; evicted, it has none",
          "[lessons][model][decode]") {
  Evaluator eval;
  ModelSettings layer0, layer1;
  layer0.layer = 0;
  layer1.layer = 1;
  const Settings sink = preset("decode-model-sinks"), window = preset("decode-model-sinks", "window=16");
  CHECK(value(eval, sink, "decode.bos_weight") == value(eval, sink, "decode.bos_weight", layer1));  // last layer by default
  // layer 1 (the induction heads' layer) parks more than half its weight on BOS, layer 0 little
  CHECK(value(eval, sink, "decode.bos_weight", layer1) == Approx(0.512).margin(0.005));
  CHECK(value(eval, sink, "decode.bos_weight", layer0) < 0.05);
  CHECK(value(eval, window, "decode.bos_weight", layer1) == 0);
  ModelSettings one = layer1;
  one.head = 4;
  CHECK_THROWS_WITH(value(eval, sink, "decode.bos_weight", one), Catch::Contains("outside the model"));
}

TEST_CASE("a step's policy replaces the preset's, for decode.* and the scenario", "[lessons][model][decode]") {
  Evaluator eval;
  const Settings window = preset("decode-model-sinks", "window=16");
  CHECK(value(eval, window, "decode.sink") == 0);
  CHECK(value(eval, window, "decode.window") == 16);
  CHECK(value(eval, window, "decode.slots") == 16);
  // under a plain window the policy is the window it is compared with
  CHECK(value(eval, window, "decode.loss_policy") == value(eval, window, "decode.loss_window"));
  CHECK(value(eval, window, "decode.loss_policy") == Approx(3.952).margin(0.005));
  Scenario sc = find_scenario("decode-model-sinks");
  apply(resolve(window), sc);
  CHECK(sc.decode.policy == "window=16");
  // merged like any setting: a later table without a policy keeps it
  CHECK(merge(window, Settings{}).policy == std::string("window=16"));
}

TEST_CASE("decode.* on the trained model refuses what it cannot measure, with one line", "[lessons][model][decode]") {
  Evaluator eval;
  // a full cache evicts nothing: no eviction loss to state
  CHECK_THROWS_WITH(value(eval, preset("decode-model"), "decode.loss_window"), Catch::Contains("evicts nothing"));
  // the cache figures still hold on it: BOS + 19 characters + 12 generated
  CHECK(value(eval, preset("decode-model"), "decode.tokens") == 32);
  CHECK(value(eval, preset("decode-model"), "decode.max_diff_full") < 2e-5);
  // random weights have no loss to read
  CHECK_THROWS_WITH(value(eval, preset("decode-sink"), "decode.loss_full"), Catch::Contains("trained"));
  CHECK_THROWS_WITH(value(eval, preset("default"), "decode.slots"), Catch::Contains("needs a decode scenario"));
  CHECK_THROWS_WITH(resolve(preset("default", "window=4")), Catch::Contains("needs a decode scenario"));
  ModelSettings missing;
  missing.checkpoint = "no-such-model";
  CHECK_THROWS_WITH(value(eval, preset("decode-model-sinks"), "decode.slots", missing),
                    Catch::Contains("no shipped checkpoint 'no-such-model'"));
}

TEST_CASE("a lesson's policy is read, and a bad one is refused where it stands", "[lessons][model][decode]") {
  const std::string head = R"(format = 2
id = "p"
order = 1
title = { ko = "정책", en = "Policy" }
summary = { ko = "정책", en = "Policy" }
[scenario]
preset = "decode-model-sinks"
[[step]]
id = "s"
title = { ko = "창", en = "Window" }
panel = "decode"
)";
  LoadResult ok = load_lesson_text(head + R"(text.ko = "칸 {value:decode.slots}개, 싱크 {value:decode.sink}개"
text.en = "{value:decode.slots} slots, {value:decode.sink} sinks"
[step.scenario]
policy = "window=16"
)",
                                   "p.toml");
  REQUIRE(ok.diagnostics.empty());
  REQUIRE(ok.lesson);
  CHECK(ok.lesson->steps[0].text.en == "16 slots, 0 sinks");
  LoadResult bad = load_lesson_text(head + R"(text.ko = "칸"
text.en = "slots"
[step.scenario]
policy = "window=zero"
)",
                                    "p.toml");
  REQUIRE(!bad.diagnostics.empty());
  CHECK(bad.diagnostics.front().line == 15);
  CHECK(bad.diagnostics.front().message.find("window") != std::string::npos);
}

// The scenario's prompt is a sequence of the task the model was trained on: row 0 of
// `experiment streaming`'s batch (issue 25: the hand-written prompt was out of distribution).
TEST_CASE("decode-model-sinks feeds an in-distribution sequence: row 0 of the streaming batch", "[lessons][model][decode]") {
  model::TaskSpec spec;
  spec.vocab = 65;
  spec.len = 48;
  spec.min_repeat = 2;
  spec.max_repeat = 7;
  const model::Batch b = model::make_batch(spec, 64, 4242, 0);
  const std::vector<int32_t> row(b.tokens.begin(), b.tokens.begin() + b.len);
  CHECK(model::encode(find_scenario("decode-model-sinks").decode.prompts.at(0), 65) == row);
}

TEST_CASE("decode.copy_*: the copyable targets survive every policy, the loss rises on the others",
          "[lessons][model][decode]") {
  // copyable_targets on a hand-made sequence: BOS a b c a b x a b. At p=4 (a, seen at 1, then b)
  // the target b is copyable; at p=5 (b, seen at 2, then c) the target x is not; at p=7 (a, last
  // seen at 4, then b) the target b is again.
  const std::vector<int64_t> t = {0, 1, 2, 3, 1, 2, 4, 1, 2};
  const std::vector<uint8_t> c = model::copyable_targets(t);
  REQUIRE(c.size() == t.size() - 1);
  CHECK(c == std::vector<uint8_t>{0, 0, 0, 0, 1, 0, 0, 1});
  Evaluator eval;
  const Settings sink = preset("decode-model-sinks"), window = preset("decode-model-sinks", "window=16");
  CHECK(value(eval, sink, "decode.copy_targets") == 14);
  CHECK(value(eval, sink, "decode.copy_full") == 1);
  CHECK(value(eval, sink, "decode.copy_policy") == 1);
  CHECK(value(eval, window, "decode.copy_policy") == 1);
  CHECK(value(eval, sink, "decode.other_loss_full") == Approx(4.101).margin(0.005));
  CHECK(value(eval, sink, "decode.other_loss_policy") == Approx(4.170).margin(0.005));
  CHECK(value(eval, sink, "decode.other_loss_window") == Approx(7.204).margin(0.005));
}
