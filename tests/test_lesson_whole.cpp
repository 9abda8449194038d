// model.* fields of the whole pass (lessons/whole_quantity.h) on the shipped checkpoint: each
// against what the model's own forward (model::forward, not the whole pass) or the sampling
// rules say, and the refusals a lesson author meets.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "engine/error.h"
#include "lessons/model_quantity.h"
#include "model/checkpoint.h"
#include "model/tasks.h"

using namespace attnsim;
using namespace attnsim::lessons;

namespace {

double num(const ModelSettings& m, const std::string& field) { return std::get<double>(model_field(m, field)); }

ModelSettings sampling(double t, int64_t k = 0, double p = 1.0, int64_t seed = 0) {
  ModelSettings m;
  m.temperature = t;
  if (k) m.top_k = k;
  if (p < 1) m.top_p = p;
  if (seed) m.seed = seed;
  return m;
}

}  // namespace

TEST_CASE("model.* whole pass: greedy's next token is the model's own prediction at the last position", "[lessons][model]") {
  const model::Model& m = loaded_model(model_dir_of({}));
  // the app's opening sequence (BOS + r + r, r of 16 tokens, seed 7) less its last token
  model::Batch b = model::repeated_batch(m.config.vocab, 16, 1, 7);
  b.tokens.pop_back();
  b.targets.pop_back();
  b.part.pop_back();
  b.len -= 1;
  const model::Activations a = model::forward(m, b);
  const int64_t T = b.len, V = m.config.vocab;
  const std::vector<float> logits = a.logits.to_vector();
  const float* last = logits.data() + (T - 1) * V;
  const auto top = static_cast<double>(std::max_element(last, last + V) - last);
  CHECK(num({}, "sample_next") == top);
  CHECK(num({}, "dla_logit") == Approx(last[static_cast<size_t>(top)]).margin(1e-4));
  double z = 0;
  for (int64_t i = 0; i < V; ++i) z += std::exp(static_cast<double>(last[i] - last[static_cast<size_t>(top)]));
  CHECK(num({}, "sample_top_prob") == Approx(1 / z).epsilon(1e-5));
  CHECK(num({}, "lens_final_prob") == Approx(1 / z).epsilon(1e-5));
}

TEST_CASE("model.* whole pass: the attribution's parts, the stream and the MLP steps", "[lessons][model]") {
  CHECK(num({}, "dla_heads") + num({}, "dla_direct") == Approx(num({}, "dla_logit")).margin(1e-4));
  ModelSettings top;
  top.layer = static_cast<int64_t>(num({}, "dla_top_layer"));
  top.head = static_cast<int64_t>(num({}, "dla_top_head"));
  CHECK(num(top, "dla_part") == num({}, "dla_top"));
  CHECK(num({}, "mlp_steps") == 0);  // the shipped toy model has no MLP
  CHECK(num({}, "stream_embed") > 0);
  CHECK(num({}, "lens_agree_from") <= num({}, "layers"));
  ModelSettings l0;
  l0.layer = 0;
  CHECK(num(l0, "attn_write") > 0);
}

TEST_CASE("model.* sampling: top-k keeps k, top-p reaches p, greedy keeps one, a seed repeats", "[lessons][model]") {
  CHECK(num(sampling(1.0, 5), "sample_kept") == 5);
  CHECK(num(sampling(1.0), "sample_kept") == num({}, "vocab_targets") + 1);  // every token, BOS too
  CHECK(num(sampling(1.0), "sample_kept_mass") == Approx(1.0).margin(1e-5));
  CHECK(num(sampling(1.0, 0, 0.9), "sample_kept_mass") >= 0.9 - 1e-6);
  CHECK(num({}, "sample_kept") == 1);
  CHECK(num({}, "sample_kept_mass") == Approx(num({}, "sample_top_prob")));
  // a lower temperature sharpens
  CHECK(num(sampling(0.5), "sample_top_prob") >= num(sampling(1.0), "sample_top_prob"));
  CHECK(num(sampling(2.0), "sample_top_prob") <= num(sampling(1.0), "sample_top_prob"));
  const double loop = num(sampling(1.5, 0, 1.0, 2), "loop_share");
  CHECK((loop >= 0 && loop <= 1));
  CHECK(num(sampling(1.5, 0, 1.0, 2), "loop_share") == loop);
  CHECK(num(sampling(1.5, 0, 1.0, 2), "temperature") == 1.5);
  CHECK(num(sampling(1.5, 0, 1.0, 2), "seed") == 2);
}

TEST_CASE("model.* whole pass refuses what names nothing, with one line", "[lessons][model]") {
  CHECK_THROWS_AS(num(sampling(1.0), "dla_logit"), Error);  // sampling settings on a field that does not sample
  CHECK_THROWS_AS(num({}, "temperature"), Error);           // the table has none
  CHECK_THROWS_AS(num({}, "dla_part"), Error);              // no head named
  ModelSettings far;
  far.layer = 9;
  CHECK_THROWS_AS(num(far, "attn_write"), Error);
  CHECK_THROWS_AS(num(sampling(1.0, 1000), "sample_kept"), Error);  // top_k above V
  CHECK_THROWS_AS(num(sampling(-1.0), "sample_kept"), Error);
}
