// The trained model on the decode stack: the same logits as the training forward, token by
// token; cache eviction only where the policy says; `decode --model` as a user runs it.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "engine/error.h"
#include "helpers.h"
#include "model/formats/checkpoint.h"
#include "model/experiments/decode.h"
#include "model/pass/whole_models.h"
#include "model/training/backward.h"
#include "model/training/tasks.h"

using namespace attnsim;
using namespace attnsim::model;
using attnsim::test::run_cli;

namespace {

const std::string kShipped = std::string(ATTNSIM_SOURCE_DIR) + "/assets/models/induction";

// Per-position loss of the training forward: the reference the decode must match.
std::vector<double> forward_loss_by_position(const Model& m, const Batch& b) {
  const Tensor logits = forward(m, b).logits;  // (B,T,V)
  const int64_t B = b.batch, T = b.len, V = m.config.vocab;
  std::vector<double> loss(static_cast<size_t>(T - 1), 0.0);
  for (int64_t r = 0; r < B; ++r)
    for (int64_t t = 0; t + 1 < T; ++t) {
      const float* z = logits.f32() + (r * T + t) * V;
      double top = z[0], sum = 0;
      for (int64_t v = 0; v < V; ++v) top = std::max<double>(top, z[v]);
      for (int64_t v = 0; v < V; ++v) sum += std::exp(z[v] - top);
      loss[t] += (top + std::log(sum) - z[b.tokens[r * T + t + 1]]) / static_cast<double>(B);
    }
  return loss;
}

}  // namespace

TEST_CASE("decode --model: token by token through the caches gives the training forward's loss", "[model]") {
  const Model m = load_checkpoint(kShipped);
  TaskSpec spec;
  spec.len = m.config.seq_len;
  spec.min_repeat = 2;
  spec.max_repeat = 9;
  const Batch b = make_batch(spec, 6, 99, 0);
  const PositionLoss full = loss_by_position(m, b, CachePolicy{});
  const std::vector<double> ref = forward_loss_by_position(m, b);
  REQUIRE(full.loss.size() == ref.size());
  // float32 through different summation orders (cached keys vs one causal pass): 1e-4 nats
  for (size_t t = 0; t < ref.size(); ++t) CHECK(full.loss[t] == Approx(ref[t]).margin(1e-4));

  // A window as long as the sequence evicts nothing: the same numbers to the bit.
  const PositionLoss wide = loss_by_position(m, b, CachePolicy{PolicyKind::Window, 0, m.config.seq_len});
  CHECK(wide.loss == full.loss);
  // A window of 8: the first 8 positions see every key, the rest differ.
  const PositionLoss narrow = loss_by_position(m, b, CachePolicy{PolicyKind::Window, 0, 8});
  for (size_t t = 0; t < 8; ++t) CHECK(narrow.loss[t] == full.loss[t]);
  CHECK(narrow.loss.back() != full.loss.back());
}

TEST_CASE("a model with norms and an MLP decodes on the stack: the whole pass's blocks around its cached calls", "[model]") {
  // GPT-2's form, then Llama's: RMSNorm, SwiGLU and no position table (RoPE turns the new
  // rows and the cached K at their absolute positions)
  ModelConfig c;
  c.vocab = 17, c.seq_len = 12, c.d_model = 16, c.heads = 2, c.layers = 2, c.layernorm = true, c.mlp = true;
  const bool llama = GENERATE(false, true);
  if (llama) c.layernorm = false, c.rmsnorm = c.swiglu = true, c.rope_theta = 10, c.bias = false;
  INFO("llama " << llama);
  const Model m = init_model(c);
  const std::vector<int32_t> seq = {0, 5, 9, 5, 9, 3, 16, 2};
  const WholeTrace w = whole_forward(pass_model(m), seq);
  const Tensor want = w.model.at("norm_final").out.view({8, 16});  // what the unembedding reads
  // prefill 3 tokens, then one per step: every row, in order, is the full pass's
  StackConfig sc = decode_stack_config(m, 12);
  sc.prefill_rows = 3;
  const std::vector<Tensor> rows = fed_rows(sc, decode_stack_weights(m), {seq.begin(), seq.end()});
  REQUIRE(rows.size() == 6);
  int64_t at = 0;
  for (const Tensor& r : rows)
    for (int64_t i = 0; i < r.size(0); ++i, ++at)
      for (int64_t e = 0; e < 16; ++e) CHECK(r.at({i, e}) == Approx(want.at({at, e})).margin(1e-5));
  // each layer's trace is the pass's block: the norm and the MLP around the cached call
  Decoder dec(sc, {{seq.begin(), seq.end()}}, decode_stack_weights(m));
  const DecodeStep first = dec.prefill();
  for (const char* step : {"norm_attn", "k_cache_append", "alpha", "resid_attn", "mlp_act", "resid_mlp"})
    CHECK(first.traces[0][1].find(step) != nullptr);
  CHECK(dec.caches()[1].length() == 3);
}

TEST_CASE("decode --model: the blocks' norms, residuals and MLP are predicted before the decode runs", "[model][hostile]") {
  ModelConfig c;
  c.vocab = 4257, c.seq_len = 128, c.d_model = 128, c.heads = 4, c.layers = 4, c.layernorm = true, c.mlp = true;
  // per row: 4 layers x (5 d-wide + 2 ff-wide) + the final norm, float32
  CHECK(predict_block_bytes(c, 1) == 4 * (4 * (5 * 128 + 2 * 512) + 128));
  CHECK(predict_block_bytes(c, 10) == 10 * predict_block_bytes(c, 1));
  c.layernorm = c.mlp = false;
  CHECK(predict_block_bytes(c, 1) == 4 * 4 * 128);  // resid_attn alone
  c.d_model = int64_t{1} << 40, c.layers = int64_t{1} << 20;
  CHECK(predict_block_bytes(c, int64_t{1} << 40) == std::numeric_limits<int64_t>::max() / 2);  // saturates
}

TEST_CASE("decode --model: sizes and tokens the stack cannot run are refused with one line", "[model]") {
  ModelConfig c;
  c.vocab = 17, c.seq_len = 12, c.d_model = 16, c.heads = 2, c.layers = 1;
  const Model m = init_model(c);
  CHECK_THROWS_WITH(Decoder(decode_stack_config(m, 13), {{0, 1}}, decode_stack_weights(m)),
                    "T_max 13 is longer than the 12 positions the model was trained with");
  CHECK_THROWS_WITH(Decoder(decode_stack_config(m, 12), {{0, 17}}, decode_stack_weights(m)),
                    "token 17 is outside the vocabulary of 17");
}

TEST_CASE("cli decode --model: the shipped model continues a repeat it has never seen", "[model][cli]") {
  const auto r = run_cli("decode --model " + kShipped + " --prompt qwertyuiopasdfghqwerty --steps 10");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find("\"^qwertyuiopasdfghqwertyuiopasdfgh\"") != std::string::npos);
  CHECK(r.output.find("weights of") != std::string::npos);
  for (const char* bad : {" --d-model 32", " --steps 60", " --prompt 'a!b'"}) {
    const auto e = run_cli("decode --model " + kShipped + bad);
    INFO(bad << " -> " << e.output);
    CHECK(e.code == 2);
    CHECK(std::count(e.output.begin(), e.output.end(), '\n') == 1);
  }
}
