// Scenarios: names resolve, the same word gives the same vector, and the query-padding case
// really produces NaN rows where the padded queries are.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/error.h"
#include "engine/scenario.h"

using namespace attnsim;

TEST_CASE("every scenario validates and the default is small and Korean") {
  for (const auto& s : all_scenarios()) {
    INFO(s.name);
    REQUIRE_NOTHROW(validate(s.config));
    if (s.has_reference) REQUIRE_NOTHROW(validate(s.reference));
  }
  const Scenario& d = find_scenario("default");
  REQUIRE(d.config.d_model == 16);
  REQUIRE(d.config.heads == 4);
  REQUIRE(split_tokens(d.sentences[0]).size() == static_cast<size_t>(d.config.tq));
  REQUIRE(find_scenario("article").config.d_model == 512);
  REQUIRE_THROWS_AS(find_scenario("nope"), Error);
}

TEST_CASE("the same token always embeds to the same vector") {
  REQUIRE(embed_token("고양이가", 16) == embed_token("고양이가", 16));
  REQUIRE(embed_token("고양이가", 16) != embed_token("생선을", 16));
  const auto tokens = batch_tokens({"a b", "c"}, 2, 3);
  REQUIRE(tokens[1] == std::vector<std::string>{"c", kPadToken, kPadToken});
}

TEST_CASE("editing one input cell changes only that cell of the input") {
  const Scenario& d = find_scenario("default");
  const MhaInputs plain = scenario_inputs(d);
  const MhaInputs edited =
      scenario_inputs(d.config, d.sentences, d.key_sentences, 1.0f, {{{0, 2, 3}, 9.5f}});
  REQUIRE(edited.query.at({0, 2, 3}) == 9.5f);
  REQUIRE(edited.query.at({0, 2, 4}) == plain.query.at({0, 2, 4}));
  REQUIRE(edited.key.shares_storage_with(edited.query));  // self-attention: one tensor
  REQUIRE_THROWS_AS(
      scenario_inputs(d.config, d.sentences, d.key_sentences, 1.0f, {{{0, 9, 0}, 1.0f}}), Error);
}

TEST_CASE("query-padding-nan has NaN exactly in the padded query rows of alpha") {
  const Scenario& s = find_scenario("query-padding-nan");
  const auto r = forward(s.config, init_weights(s.config.d_model, true, s.config.seed),
                         scenario_inputs(s));
  const Tensor& alpha = r.trace.at("alpha").out;  // (B, h, Tq, Tk)
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t q = 0; q < 6; ++q) {
      const bool padded = b == 1 && q >= 4;
      REQUIRE(std::isnan(alpha.at({b, 0, q, 0})) == padded);
    }
  REQUIRE(r.trace.first_nan_step() == "alpha");
}
