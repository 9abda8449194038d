// model.* quantities that let a lesson's claim fail (issue 38): the weight-vs-contribution gap
// over every head (a max over heads is almost always > 0, a count or a weighted mean need not
// be), the first copies' loss an ablation costs, the entropy of the untrained weights, and
// recall's guess among the values present. Values measured on the shipped checkpoints with
// `attnsim-cli lesson show` and `ablate`; each case reads one or two small models (well under a
// second).
#include <catch2/catch.hpp>

#include <string>

#include "engine/error.h"
#include "lessons/model_quantity.h"

using namespace attnsim;
using namespace attnsim::lessons;

namespace {

double num(const std::string& checkpoint, const std::string& field, const std::string& ablate = "") {
  ModelSettings m;
  m.checkpoint = checkpoint;
  if (!ablate.empty()) m.ablate = ablate;
  return std::get<double>(model_field(m, field));
}

}  // namespace

TEST_CASE("gap_up / gap_down / gap_mean: the shipped model leans one way, an h16 run both ways", "[lessons][model]") {
  // the shipped model: every head puts more weight on BOS than BOS contributes
  CHECK(num("induction", "head_count") == 8);
  CHECK(num("induction", "gap_up") == 8);
  CHECK(num("induction", "gap_down") == 0);
  CHECK(num("induction", "gap_mean") == Approx(0.0772).margin(1e-3));
  CHECK(num("induction", "gap_size") > num("induction", "gap_mean"));  // the max over heads is larger
  // a 16-head run that never learned: the heads split and the weighted mean is below 0
  CHECK(num("induction-d64-h16-6k-s1", "head_count") == 32);
  CHECK(num("induction-d64-h16-6k-s1", "gap_up") == 15);
  CHECK(num("induction-d64-h16-6k-s1", "gap_down") == 17);
  CHECK(num("induction-d64-h16-6k-s1", "gap_mean") == Approx(-0.0138).margin(1e-3));
  CHECK(num("induction-d64-h16-6k-s1", "gap_size") > 0);  // while the max still says "above 0"
}

TEST_CASE("first_loss_rise: zeroing head 0.3 helps the repeats a little and costs the first copies", "[lessons][model]") {
  CHECK(num("induction", "first_loss_rise", "0.3") == Approx(0.8628).margin(1e-3));
  CHECK(num("induction", "repeat_loss_rise", "0.3") == Approx(-0.0137).margin(1e-3));
  CHECK(num("induction", "first_loss_rise", "0.1") == Approx(-0.0532).margin(1e-3));
  CHECK_THROWS_AS(num("induction", "first_loss_rise"), Error);  // needs `ablate`
}

TEST_CASE("init_mean_entropy: the untrained weights are flatter than the trained model", "[lessons][model]") {
  const double init = num("induction-d64-h16-6k-s1", "init_mean_entropy");
  CHECK(init == Approx(2.671).margin(2e-3));
  CHECK(init < num("induction-d64-h16-6k-s1", "uniform_entropy"));  // nearly, not exactly, uniform
  CHECK(num("induction-d64-h16-6k-s1", "mean_entropy") == Approx(1.515).margin(2e-3));
}

TEST_CASE("recall_present_chance: a guess among the values in the sequence beats a guess among all", "[lessons][model]") {
  const double present = num("recall-d64-h8-kv1-8k-s1", "recall_present_chance");
  CHECK(present == Approx(0.1005).margin(1e-3));
  CHECK(present > num("recall-d64-h8-kv1-8k-s1", "recall_chance"));  // 1/32
  CHECK_THROWS_AS(num("induction", "recall_present_chance"), Error);  // not a recall run
}
