// experiment roles / ablation / sink on a Hugging Face folder (model/hf_experiments.h): the
// repeated-sequence parts against a plain loop over the logits, the ablation table against
// repeat_quality with the head zeroed, the roles against score_hf_heads_repeated, refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "engine/error.h"
#include "model/experiments/hf_eval.h"
#include "model/experiments/hf_experiments.h"
#include "model/pass/hf_forward.h"
#include "model/formats/hf_model.h"

using namespace attnsim;
using namespace attnsim::model;
using namespace attnsim::model::hf;

namespace {

std::string golden(const std::string& name) { return std::string(ATTNSIM_SOURCE_DIR) + "/tests/golden/" + name; }

// −log softmax(row)[target], written out
double nll(const Tensor& logits, int64_t row, int32_t target) {
  const int64_t V = logits.size(1);
  double z = 0;
  for (int64_t v = 0; v < V; ++v) z += std::exp(static_cast<double>(logits.f32()[row * V + v]));
  return std::log(z) - logits.f32()[row * V + target];
}

}  // namespace

TEST_CASE("HF experiments: the repeat part is the second copy's r[1..L-1], the first part r[0..L-1]") {
  for (const char* name : {"hf_gpt2_f32", "hf_llama_f32"}) {  // no BOS / a BOS
    const HfModel m = load_hf_model(golden(name));
    HfExperimentOptions o;
    o.repeat_len = 5;
    o.sequences = 2;
    double first = 0, repeat = 0;
    int64_t nf = 0, nr = 0;
    for (int64_t s = 0; s < o.sequences; ++s) {
      const std::vector<int32_t> tok = repeated_random_tokens(m.config, o.repeat_len, o.seed + static_cast<uint64_t>(s));
      const int64_t b = m.config.bos >= 0 ? 1 : 0, L = o.repeat_len;
      REQUIRE(static_cast<int64_t>(tok.size()) == b + 2 * L);
      const Tensor logits = hf_forward(m, tok, {}).logits;
      for (int64_t i = 0; i < L; ++i)
        if (b + i - 1 >= 0) first += nll(logits, b + i - 1, tok[static_cast<size_t>(b + i)]), ++nf;  // predicts r[i]
      for (int64_t i = 1; i < L; ++i) repeat += nll(logits, b + L + i - 1, tok[static_cast<size_t>(b + L + i)]), ++nr;
    }
    const RepeatQuality q = repeat_quality(m, o);
    CHECK(q.first_targets == nf);
    CHECK(q.repeat_targets == nr);
    CHECK(q.loss_first == Approx(first / static_cast<double>(nf)).epsilon(1e-9));
    CHECK(q.loss_repeat == Approx(repeat / static_cast<double>(nr)).epsilon(1e-9));
    CHECK(q.accuracy_repeat >= 0.0);
    CHECK(q.accuracy_repeat <= 1.0);
  }
}

TEST_CASE("HF experiment ablation: each row is the repeat loss with that head zeroed, minus the base") {
  const HfModel m = load_hf_model(golden("hf_llama_f32"));
  HfExperimentOptions o;
  o.repeat_len = 6;
  o.sequences = 2;
  const ExperimentResult r = run_hf_experiment("ablation", m, o);
  REQUIRE(r.json.size() == static_cast<size_t>(m.config.layers * m.config.heads));
  const RepeatQuality base = repeat_quality(m, o);
  std::vector<std::vector<HeadPatch>> patches(static_cast<size_t>(m.config.layers));
  patches[1].push_back(HeadPatch{1, {}});
  const RepeatQuality q = repeat_quality(m, o, patches);
  const auto& row = r.json[static_cast<size_t>(1 * m.config.heads + 1)];
  CHECK(row["layer"] == 1);
  CHECK(row["head"] == 1);
  CHECK(row["delta_loss_repeat"].get<double>() == Approx(q.loss_repeat - base.loss_repeat).margin(1e-12));
  CHECK(q.loss_repeat != base.loss_repeat);  // the head does something
  CHECK(r.conclusion.values.at(1) == std::to_string(m.config.layers * m.config.heads));
  CHECK(r.table.find("uniform ln V = ") != std::string::npos);
}

TEST_CASE("HF experiments roles and sink read score_hf_heads_repeated") {
  const HfModel m = load_hf_model(golden("hf_gpt2_f32"));
  HfExperimentOptions o;
  o.repeat_len = 6;
  o.sequences = 3;
  const HeadTable t = score_hf_heads_repeated(m, o.repeat_len, o.sequences, o.seed);
  const ExperimentResult roles = run_hf_experiment("roles", m, o), sink = run_hf_experiment("sink", m, o);
  REQUIRE(roles.json.size() == t.cells.size());
  int sinks = 0;
  for (size_t i = 0; i < t.cells.size(); ++i) {
    CHECK(roles.json[i]["induction"].get<double>() == t.cells[i].induction);
    CHECK(roles.json[i]["role"] == role_label(t.cells[i]));
    CHECK(sink.json[i]["first"].get<double>() == t.cells[i].first);
    sinks += t.cells[i].first >= kFirstThreshold;
  }
  CHECK(sink.conclusion.values.at(0) == std::to_string(sinks));
}

TEST_CASE("HF experiments refuse what needs training or the toy model's caches") {
  const HfConfig c = read_hf_config(golden("hf_gpt2_f32"));
  const HfExperimentOptions o;
  CHECK_THROWS_WITH(predict_hf_experiment_bytes("prune", c, o), Catch::Contains("trains its own models"));
  CHECK_THROWS_WITH(predict_hf_experiment_bytes("streaming", c, o), Catch::Contains("cache policies"));
  CHECK_THROWS_WITH(predict_hf_experiment_bytes("bogus", c, o), Catch::Contains("unknown experiment"));
  CHECK(predict_hf_experiment_bytes("ablation", c, o) > 0);
}
