// The engine against PyTorch 1.13: every step of tests/golden/<case>/ (made by
// make_golden.py) must match the trace step of the same name.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/mha.h"
#include "engine/npy.h"
#include "helpers.h"

using namespace attnsim;

static void check_case(const std::string& name) {
  const std::string dir = std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/" + name;
  std::ifstream in(dir + "/case.json");
  REQUIRE(in);
  const nlohmann::json c = nlohmann::json::parse(in);
  MhaConfig config;
  config.batch = c["batch"];
  config.tq = c["tq"];
  config.tk = c["tk"];
  config.d_model = c["d_model"];
  config.heads = c["heads"];
  config.bias = c["bias"];
  config.self_attention = !c["cross"].get<bool>();
  config.mask = parse_mask_spec(c["mask"]);
  MhaInputs inputs;
  inputs.query = read_npy(dir + "/query.npy");
  inputs.key = config.self_attention ? inputs.query : read_npy(dir + "/key.npy");
  inputs.value = config.self_attention ? inputs.query : read_npy(dir + "/value.npy");
  const MhaWeights weights = load_weights(dir, config.d_model, config.bias);
  const ForwardResult r = forward(config, weights, inputs);
  REQUIRE(r.error.empty());
  for (const std::string step : c["steps"]) {
    INFO("case " << name << ", step " << step);
    const Tensor expected = read_npy(dir + "/" + step + ".npy");
    const Step& got = r.trace.at(step);
    REQUIRE_FALSE(got.skipped());
    REQUIRE(got.out.shape() == expected.shape());
    CHECK(test::max_abs_diff(got.out, expected) <= 2e-5);
  }
}

TEST_CASE("golden: the article's class at small size, with biases") { check_case("article_small"); }
TEST_CASE("golden: projections without bias") { check_case("no_bias"); }
TEST_CASE("golden: causal and key padding combined with OR") { check_case("causal_keypad"); }
TEST_CASE("golden: left padding") { check_case("left_padding"); }
TEST_CASE("golden: cross-attention with Tq != Tk and key padding") { check_case("cross"); }
TEST_CASE("golden: query padding gives the same NaN rows as PyTorch") {
  check_case("query_padding_nan");
  const Tensor alpha = read_npy(std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/query_padding_nan/alpha.npy");
  CHECK(std::isnan(alpha.at({1, 0, 4, 0})));  // batch 1 has 3 real queries: rows 3 and 4 are NaN
  CHECK_FALSE(std::isnan(alpha.at({1, 0, 2, 0})));
}
