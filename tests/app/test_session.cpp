// The recompute session: work runs off the UI thread, a bad setting gives the engine's
// message and leaves the last good run on screen, an edited input cell flows downstream.
#include <algorithm>

#include <catch2/catch.hpp>

#include "views/session.h"

using namespace attnsim;
using namespace attnsim::app;

TEST_CASE("a session computes off the calling thread and swaps the run in") {
  Session s;
  s.load("default");
  s.wait();
  REQUIRE(s.error().empty());
  REQUIRE(s.data() != nullptr);
  REQUIRE(s.data()->run.trace.steps.size() == trace_step_names(false, false).size());
  REQUIRE(s.data()->q_tokens[0].size() == 6);
}

TEST_CASE("after a scenario's first run a second pass's buffers wait in the pool") {
  Session s;
  s.load("article");
  s.wait();
  s.wait_warm();
  int64_t trace_bytes = 0;
  std::vector<const Storage*> seen;
  for (const Step& step : s.data()->run.trace.steps)
    if (step.out.defined() && std::find(seen.begin(), seen.end(), step.out.storage().get()) == seen.end()) {
      seen.push_back(step.out.storage().get());
      trace_bytes += step.out.storage()->nbytes;
    }
  CHECK(trace_bytes > 100'000'000);
  CHECK(pooled_buffer_bytes() >= trace_bytes);
}

TEST_CASE("an invalid combination reports the engine's message and keeps the last run") {
  Session s;
  s.load("default");
  s.wait();
  const uint64_t good = s.data()->generation;
  s.scenario().config.heads = 3;  // d_model 16 is not divisible by 3
  s.request();
  s.wait();
  REQUIRE_FALSE(s.error().empty());
  REQUIRE(s.error().find('3') != std::string::npos);
  REQUIRE(s.data()->generation == good);
  s.scenario().config.heads = 4;
  s.request();
  s.wait();
  REQUIRE(s.error().empty());
  REQUIRE(s.data()->generation > good);
}

TEST_CASE("editing one input cell changes the output downstream") {
  Session s;
  s.load("default");
  s.wait();
  const Tensor before = s.data()->run.trace.at("out").out;
  s.edits()[{0, 2, 5}] = 4.0f;
  s.request();
  s.wait();
  const Trace& t = s.data()->run.trace;
  REQUIRE(t.at("query").out.at({0, 2, 5}) == 4.0f);
  // token 2's row of q_proj changes; with self-attention every output row sees token 2
  REQUIRE(t.at("out").out.at({0, 0, 0}) != before.at({0, 0, 0}));
}

TEST_CASE("a bug-lab scenario computes the correct run beside it") {
  Session s;
  s.load("query-padding-nan");
  s.wait();
  REQUIRE(s.data()->has_reference);
  REQUIRE(s.data()->run.trace.first_nan_step() == "alpha");
  REQUIRE(s.data()->reference.trace.first_nan_step().empty());
}

TEST_CASE("switching scenario while one computes never shows the old scenario's run") {
  Session s;
  s.load("article");  // long: still running when the next load comes
  s.load("default");
  s.wait();
  REQUIRE(s.data()->config.d_model == 16);
  REQUIRE(s.data()->q_tokens[0].size() == 6);
}

TEST_CASE("edits, masks and bugs reuse the weights and inputs; a new seed or size rebuilds them") {
  Session s;
  s.load("article");  // random inputs: they depend on the seed
  s.wait();
  REQUIRE(s.error().empty());
  const RunInputs& kept = s.kept_inputs();
  CHECK(kept.weights_built() == 1);
  CHECK(kept.inputs_built() == 1);
  const Tensor first_query = s.data()->run.trace.at("query").out;

  s.edits()[{3, 7, 11}] = 5.0f;  // one input cell
  s.request();
  s.wait();
  CHECK(s.data()->run.trace.at("query").out.at({3, 7, 11}) == 5.0f);
  CHECK(s.data()->run.trace.at("query").out.at({3, 7, 12}) == first_query.at({3, 7, 12}));
  CHECK(first_query.at({3, 7, 11}) != 5.0f);  // the kept inputs were copied, not written
  CHECK_FALSE(s.data()->run.trace.reused_head_steps);  // a new input: new projections
  s.scenario().config.mask.causal = true;  // a mask
  s.request();
  s.wait();
  CHECK_FALSE(s.data()->run.trace.at("mask").skipped());
  CHECK(s.data()->run.trace.reused_head_steps);  // the edited query is kept: q/k/v_proj not recomputed
  s.scenario().config.bug = Bug::NoScale;  // a bug
  s.request();
  s.wait();
  REQUIRE(s.error().empty());
  CHECK(s.data()->run.trace.reused_head_steps);
  CHECK(kept.weights_built() == 1);
  CHECK(kept.inputs_built() == 1);

  s.scenario().config.seed = 7;  // weights and random inputs both follow the seed
  s.request();
  s.wait();
  CHECK(kept.weights_built() == 2);
  CHECK(kept.inputs_built() == 2);
  s.scenario().config.seed = 0;  // the first ones are still kept
  s.request();
  s.wait();
  CHECK(kept.weights_built() == 2);
  CHECK(kept.inputs_built() == 2);
  CHECK(s.data()->run.trace.at("query").out.at({3, 7, 12}) == first_query.at({3, 7, 12}));
}

TEST_CASE("a sentence scenario keeps its inputs when only the seed changes") {
  Session s;
  s.load("default");
  s.wait();
  s.scenario().config.seed = 3;
  s.request();
  s.wait();
  CHECK(s.kept_inputs().weights_built() == 2);
  CHECK(s.kept_inputs().inputs_built() == 1);  // embeddings of the sentences do not use the seed
}
