// model.* fields of the whole pass (lessons/whole_quantity.h) on the shipped checkpoint: each
// against what the model's own forward (model::forward, not the whole pass) or the sampling
// rules say, and the refusals a lesson author meets.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "engine/error.h"
#include "lessons/model_quantity.h"
#include "model/formats/checkpoint.h"
#include "model/training/tasks.h"

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

// Row `index` of the repeated batch the whole-pass fields read (BOS + r + r, seed 7), less
// `cut` tokens at its end, through the model's own forward: the last position's logits.
std::vector<float> last_logits(const model::Model& m, int64_t rows, int64_t index, int64_t cut) {
  const model::Batch all = model::repeated_batch(m.config.vocab, 16, rows, 7);
  const std::vector<int32_t> row(all.tokens.begin() + index * all.len, all.tokens.begin() + (index + 1) * all.len - cut);
  const model::Batch b = model::batch_from_tokens({row});
  const std::vector<float> logits = model::forward(m, b).logits.to_vector();
  const int64_t V = m.config.vocab;
  return {logits.end() - V, logits.end()};
}

// softmax(z)[i] at temperature 1, in double
double prob(const std::vector<float>& z, size_t i) {
  const double top = *std::max_element(z.begin(), z.end());
  double sum = 0;
  for (const float v : z) sum += std::exp(v - top);
  return std::exp(z[i] - top) / sum;
}

ModelSettings over(int64_t prompts, const std::string& of, ModelSettings m = {}) {
  m.prompts = prompts;
  m.of = of;
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
  CHECK(num({}, "mlp_steps") == 0);   // the shipped toy model has no MLP
  CHECK(num({}, "norm_steps") == 0);  // and no norm (layernorm: false)
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

TEST_CASE("model.* third_copy_prob and loop_prob: the model's own odds, after the second copy and inside the loop", "[lessons][model]") {
  const model::Model& m = loaded_model(model_dir_of({}));
  const model::Batch b = model::repeated_batch(m.config.vocab, 16, 1, 7);
  const std::vector<float> z = last_logits(m, 1, 0, 0);  // BOS + r + r, nothing cut
  const auto r0 = static_cast<size_t>(b.tokens[1]);     // a third copy would start with r's first token
  CHECK(num({}, "third_copy_prob") == Approx(prob(z, r0)).epsilon(1e-5));
  // trained on pairs followed by fresh tokens, the shipped model does not expect a third copy:
  // about what a uniform guess among the 48 tokens not yet seen gives
  CHECK(num({}, "third_copy_prob") < 0.05);
  // but once it is inside the loop it is sure of it: the first decoded token completes the
  // second copy, p = the model's top probability there
  CHECK(num({}, "loop_prob") > 0.99);
  CHECK(num({}, "loop_prob") <= 1.0);
  // a higher temperature flattens: the loop's tokens get less
  CHECK(num(sampling(1.5, 0, 1.0, 1), "loop_prob") < num({}, "loop_prob"));
  // 48 positions, 32 taken by BOS + r + r less its last token: 16 decoded tokens
  CHECK(num({}, "loop_tokens") == m.config.seq_len - 2 * 16);
  CHECK(num({}, "loop_tokens") == 16);
  // the greedy decode of the shipped model: 15 of its 16 tokens continue the loop (the one
  // that does not is right after the second copy, where the model expects fresh tokens)
  CHECK(num({}, "loop_share") == Approx(15.0 / 16));
  // every decoded position there follows a token seen before (the flat pick after the second
  // copy was one of r's tokens); a token that continues the loop needs such a position
  CHECK(num({}, "loop_seen") == 1.0);
  CHECK(num(sampling(1.5, 0, 1.0, 1), "loop_seen") >= num(sampling(1.5, 0, 1.0, 1), "loop_share"));
}

TEST_CASE("model.* prompts_*: a whole-pass field over several sequences, the first being the lesson's", "[lessons][model]") {
  const model::Model& m = loaded_model(model_dir_of({}));
  // one sequence: every statistic is the field itself
  for (const char* f : {"prompts_mean", "prompts_median", "prompts_min", "prompts_max"})
    CHECK(num(over(1, "dla_logit"), f) == num({}, "dla_logit"));
  // five sequences: the model's own top probability at each one's last position (r's last token cut)
  std::vector<double> top;
  for (int64_t i = 0; i < 5; ++i) {
    const std::vector<float> z = last_logits(m, 5, i, 1);
    top.push_back(prob(z, static_cast<size_t>(std::max_element(z.begin(), z.end()) - z.begin())));
  }
  CHECK(top[0] == Approx(num({}, "sample_top_prob")).epsilon(1e-5));
  std::sort(top.begin(), top.end());
  CHECK(num(over(5, "sample_top_prob"), "prompts_min") == Approx(top.front()).epsilon(1e-5));
  CHECK(num(over(5, "sample_top_prob"), "prompts_max") == Approx(top.back()).epsilon(1e-5));
  CHECK(num(over(5, "sample_top_prob"), "prompts_median") == Approx(top[2]).epsilon(1e-5));
  CHECK(num(over(5, "sample_top_prob"), "prompts_mean") == Approx((top[0] + top[1] + top[2] + top[3] + top[4]) / 5).epsilon(1e-5));
  // an even count's median is the mean of the middle two
  const double lo = num(over(4, "sample_top_prob"), "prompts_min"), hi = num(over(4, "sample_top_prob"), "prompts_max");
  const double med = num(over(4, "sample_top_prob"), "prompts_median");
  CHECK((lo <= med && med <= hi));
  // the sampling settings reach every sequence: at temperature 2 the top token gets less
  CHECK(num(over(5, "sample_top_prob", sampling(2.0)), "prompts_max") < top.back());
  CHECK(num(over(5, "sample_top_prob", sampling(2.0)), "prompts") == 5);
}

TEST_CASE("model.* dla_top_share and dla_half_heads: how many heads write the answer", "[lessons][model]") {
  const model::Model& m = loaded_model(model_dir_of({}));
  CHECK(num({}, "dla_top_share") == Approx(num({}, "dla_top") / num({}, "dla_heads")));
  std::vector<double> parts;
  for (int64_t l = 0; l < m.config.layers; ++l)
    for (int64_t h = 0; h < m.config.heads; ++h) {
      ModelSettings one;
      one.layer = l;
      one.head = h;
      parts.push_back(num(one, "dla_part"));
    }
  std::sort(parts.rbegin(), parts.rend());
  const auto k = static_cast<size_t>(num({}, "dla_half_heads"));
  REQUIRE(k >= 1);
  REQUIRE(k <= parts.size());
  double sum = 0;
  for (size_t i = 0; i < k; ++i) sum += parts[i];
  CHECK(sum >= num({}, "dla_heads") / 2);      // k heads write half
  CHECK(sum - parts[k - 1] < num({}, "dla_heads") / 2);  // k - 1 do not
  CHECK(num({}, "dla_top_share") < 0.5);       // on the shipped model no head writes half alone
  CHECK(k >= 2);
}

TEST_CASE("model.* prompts_* refuses what names nothing, with one line", "[lessons][model]") {
  CHECK_THROWS_AS(num({}, "prompts_mean"), Error);                          // no prompts
  CHECK_THROWS_AS(num(over(0, "dla_logit"), "prompts_mean"), Error);        // none
  CHECK_THROWS_AS(num(over(257, "dla_logit"), "prompts_mean"), Error);      // past the cap
  CHECK_THROWS_AS(num(over(3, "repeat_accuracy"), "prompts_mean"), Error);  // not a field of one sequence
  CHECK_THROWS_AS(num(over(3, "prompts_min"), "prompts_mean"), Error);
  CHECK_THROWS_AS(num(over(3, "temperature"), "prompts_mean"), Error);
  CHECK_THROWS_AS(num(over(3, "dla_logit"), "dla_logit"), Error);           // prompts on a field of one sequence
  CHECK_THROWS_AS(num(over(3, "dla_logit", sampling(1.0)), "prompts_mean"), Error);  // dla_logit does not sample
  ModelSettings runs = over(3, "loop_share");
  runs.prompts.reset();
  runs.runs = "induction";
  runs.of = "prompts_mean";
  CHECK_THROWS_AS(num(runs, "runs_max"), Error);
}
