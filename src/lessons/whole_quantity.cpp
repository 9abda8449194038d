// model.* fields of the whole pass. See whole_quantity.h.
#include "lessons/whole_quantity.h"

#include <algorithm>
#include <cmath>

#include "engine/error.h"
#include "model/lens.h"
#include "model/sampling.h"
#include "model/tasks.h"
#include "model/whole_models.h"
#include "model/whole_pass.h"

namespace attnsim::lessons {

const std::vector<std::string>& whole_fields() {
  static const std::vector<std::string> fields = {
      "stream_embed", "stream_final", "attn_write", "mlp_steps", "dla_logit", "dla_heads", "dla_direct", "dla_top",
      "dla_top_layer", "dla_top_head", "dla_part", "lens_embed_prob", "lens_final_prob", "lens_agree_from",
      "sample_top_prob", "sample_kept", "sample_kept_mass", "sample_next", "loop_share",
      // the table's own sampling settings, so a text writes temperature {value:model.temperature@ID}
      "temperature", "top_k", "top_p", "seed"};
  return fields;
}

bool is_whole_field(const std::string& f) {
  return std::find(whole_fields().begin(), whole_fields().end(), f) != whole_fields().end();
}

namespace {

constexpr int64_t kRepeat = 16;  // as the app's opening sequence (ModelView::load)
constexpr uint64_t kSeed = 7;


// mean over positions of ‖x_t‖, x (1,T,d)
double mean_norm(const Tensor& stream) {
  const Tensor x = stream.contiguous();  // copies only a view
  const int64_t T = x.size(1), d = x.size(2);
  double total = 0;
  for (int64_t t = 0; t < T; ++t) {
    double s = 0;
    for (int64_t i = 0; i < d; ++i) s += static_cast<double>(x.f32()[t * d + i]) * x.f32()[t * d + i];
    total += std::sqrt(s);
  }
  return total / static_cast<double>(T);
}


int64_t layer_of(const model::Model& m, const ModelSettings& s, const std::string& f) {
  const int64_t l = s.layer.value_or(m.config.layers - 1);
  if (l < 0 || l >= m.config.layers)
    throw Error("model." + f + ": layer " + std::to_string(l) + " is outside the model (0.." + std::to_string(m.config.layers - 1) + ")");
  return l;
}

Value dla_field(const model::LogitAttribution& a, const model::Model& m, const ModelSettings& s, const std::string& f) {
  if (f == "dla_logit") return a.logit;
  double heads = 0, top = -HUGE_VAL;
  int64_t top_l = 0, top_h = 0;
  for (const model::LogitPart& p : a.parts) {
    int64_t l = 0, h = 0;
    if (std::sscanf(p.name.c_str(), "layer_%ld/head_%ld", &l, &h) != 2) continue;
    heads += p.value;
    if (p.value > top) top = p.value, top_l = l, top_h = h;
    if (f == "dla_part" && s.layer && s.head && l == *s.layer && h == *s.head) return p.value;
  }
  if (f == "dla_heads") return heads;
  if (f == "dla_direct") return a.sum() - heads;
  if (f == "dla_top") return top;
  if (f == "dla_top_layer") return static_cast<double>(top_l);
  if (f == "dla_top_head") return static_cast<double>(top_h);
  throw Error("model.dla_part needs layer and head inside the model (" + std::to_string(m.config.layers) + " layers x " +
              std::to_string(m.config.heads) + " heads)");
}

// Decodes up to the model's positions after the sequence, each token by the table's sampling
// (its seed, the draw's index as the step). The share of decoded tokens that repeat the
// context: the token before it occurred earlier and was followed there (the latest time) by
// this same token. What a copying head proposes; what greedy then takes every time.
double loop_share(const model::Model& m, const model::PassModel& pm, std::vector<int32_t> tokens, model::SamplingOptions o) {
  const int64_t start = static_cast<int64_t>(tokens.size());
  if (start >= m.config.seq_len) throw Error("model.loop_share: the sequence leaves no position to decode (use a smaller repeat)");
  int64_t loops = 0;
  for (int64_t i = 0; start + i < m.config.seq_len; ++i) {
    const model::WholeTrace w = model::whole_forward(pm, tokens);
    const Tensor& logits = w.logits();  // (1,T,V)
    const int64_t T = logits.size(1), V = logits.size(2);
    o.step = i;
    const int32_t next = model::sample_row(logits.f32() + (T - 1) * V, V, o).next;
    for (int64_t j = T - 2; j >= 0; --j)  // the latest earlier occurrence of the last token
      if (tokens[static_cast<size_t>(j)] == tokens.back()) {
        loops += tokens[static_cast<size_t>(j + 1)] == next;
        break;
      }
    tokens.push_back(next);
  }
  return static_cast<double>(loops) / static_cast<double>(m.config.seq_len - start);
}

}  // namespace

// BOS + r + r without its last token: the last position's answer is r's last token, which a
// model that copies can read off the first copy (after a whole second copy nothing predicts
// what comes next, and the readings there are of a guess).
std::vector<int32_t> whole_sequence(const model::Model& m, const ModelSettings& s) {
  const model::Batch b = model::repeated_batch(m.config.vocab, s.repeat.value_or(kRepeat), 1, kSeed);
  return {b.tokens.begin(), b.tokens.end() - 1};
}

model::SamplingOptions sampling_options(const ModelSettings& s) {
  model::SamplingOptions o;
  o.temperature = s.temperature.value_or(0.0);
  o.top_k = s.top_k.value_or(0);
  o.top_p = s.top_p.value_or(1.0);
  o.seed = static_cast<uint64_t>(s.seed.value_or(0));
  return o;
}

Value whole_field(const model::Model& m, const ModelSettings& s, const std::string& f) {
  const std::vector<int32_t> tokens = whole_sequence(m, s);
  const model::PassModel pm = model::pass_model(m);
  const model::SamplingOptions o = sampling_options(s);
  model::validate_sampling(o, m.config.vocab);
  if (f == "loop_share") return loop_share(m, pm, tokens, o);
  const model::WholeTrace w = model::whole_forward(pm, tokens);
  if (f == "stream_embed") return mean_norm(w.model.at("embed").out);
  if (f == "stream_final") return mean_norm(model::block_output(pm, w.blocks.back()));
  if (f == "attn_write") return mean_norm(w.blocks[static_cast<size_t>(layer_of(m, s, f))].at("out").out);
  if (f == "mlp_steps") {
    double n = 0;
    for (const char* step : {"norm_mlp", "mlp_gate", "mlp_up", "mlp_act", "mlp_down", "resid_mlp"}) n += !w.blocks[0].at(step).skipped();
    return n;
  }
  if (f.rfind("dla_", 0) == 0) return dla_field(model::attribute_logit(pm, w), m, s, f);
  if (f.rfind("lens_", 0) == 0) {
    const model::LogitLens lens = model::logit_lens(pm, w);
    if (f == "lens_embed_prob") return lens.rows.front().target_prob;
    if (f == "lens_final_prob") return lens.rows.back().target_prob;
    for (size_t i = 0; i < lens.rows.size(); ++i)
      if (lens.rows[i].top == lens.target) return static_cast<double>(i);
    return static_cast<double>(lens.rows.size());  // unreachable: the last stage's top is the answer
  }
  // sample_*: the sampling steps on the last position's logits
  const Tensor& logits = w.logits();
  const Tensor last = logits.narrow(1, logits.size(1) - 1, 1).contiguous();  // (1,1,V)
  const Trace tr = model::sampling_trace(last, o);
  const int64_t V = last.size(2);
  const float* probs = tr.at("probs").out.f32();
  if (f == "sample_top_prob") return static_cast<double>(*std::max_element(probs, probs + V));
  const int32_t next = static_cast<int32_t>(tr.at("next_token").out.f32()[0]);
  if (f == "sample_next") return static_cast<double>(next);
  const Step& top_p = tr.at("top_p");
  double kept = 0, mass = 0;
  for (int64_t i = 0; i < V; ++i)
    if (top_p.skipped() ? i == next : top_p.out.f32()[i] > 0) kept += 1, mass += probs[i];
  return f == "sample_kept" ? kept : mass;
}

}  // namespace attnsim::lessons
