// model.* fields of the whole pass. See whole_quantity.h.
#include "lessons/whole_quantity.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>

#include "engine/error.h"
#include "model/pass/lens.h"
#include "model/pass/sampling.h"
#include "model/training/tasks.h"
#include "model/pass/whole_models.h"
#include "model/pass/whole_pass.h"

namespace attnsim::lessons {

const std::vector<std::string>& whole_fields() {
  static const std::vector<std::string> fields = {
      "stream_embed", "stream_final", "attn_write", "mlp_steps", "norm_steps", "dla_logit", "dla_heads", "dla_direct", "dla_top",
      "dla_top_layer", "dla_top_head", "dla_part", "lens_embed_prob", "lens_final_prob", "lens_agree_from",
      "dla_top_share", "dla_half_heads", "sample_top_prob", "sample_kept", "sample_kept_mass", "sample_next",
      "loop_share", "loop_tokens", "loop_seen", "loop_prob", "third_copy_prob",
      // the table's `of` over its first `prompts` sequences
      "prompts_mean", "prompts_median", "prompts_min", "prompts_max",
      // the table's own settings, so a text writes temperature {value:model.temperature@ID}
      "temperature", "top_k", "top_p", "seed", "prompts"};
  return fields;
}

bool is_whole_field(const std::string& f) {
  return std::find(whole_fields().begin(), whole_fields().end(), f) != whole_fields().end();
}

bool reads_sampling(const std::string& f) {
  return f.rfind("sample_", 0) == 0 || (f.rfind("loop_", 0) == 0 && f != "loop_tokens") || f == "third_copy_prob";
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
  std::vector<double> parts;  // every head's part
  for (const model::LogitPart& p : a.parts) {
    int64_t l = 0, h = 0;
    if (std::sscanf(p.name.c_str(), "layer_%ld/head_%ld", &l, &h) != 2) continue;
    heads += p.value;
    parts.push_back(p.value);
    if (p.value > top) top = p.value, top_l = l, top_h = h;
    if (f == "dla_part" && s.layer && s.head && l == *s.layer && h == *s.head) return p.value;
  }
  if (f == "dla_heads") return heads;
  if (f == "dla_direct") return a.sum() - heads;
  if (f == "dla_top") return top;
  if (f == "dla_top_layer") return static_cast<double>(top_l);
  if (f == "dla_top_head") return static_cast<double>(top_h);
  if (f == "dla_top_share") return top / heads;
  if (f == "dla_half_heads") {  // the fewest heads, largest parts first, that write half the heads' sum
    std::sort(parts.rbegin(), parts.rend());
    double sum = 0;
    size_t n = 0;
    while (sum < heads / 2 && n < parts.size()) sum += parts[n++];
    return static_cast<double>(n);
  }
  throw Error("model.dla_part needs layer and head inside the model (" + std::to_string(m.config.layers) + " layers x " +
              std::to_string(m.config.heads) + " heads)");
}

// The token that continues the loop after `tokens`: the one that followed the latest earlier
// occurrence of the last token; -1 when the last token has not occurred before.
int32_t loop_token(const std::vector<int32_t>& tokens) {
  for (size_t j = tokens.size() - 1; j-- > 0;)
    if (tokens[j] == tokens.back()) return tokens[j + 1];
  return -1;
}

// What loop_share's decode saw: the share of decoded tokens that continue the loop, the share
// of decoded positions that have a loop token, and there the probability probs gave it.
struct Decoded {
  double share = 0, seen = 0;
  std::vector<double> loop_probs;
};

// Decodes up to the model's positions after the sequence, each token by the table's sampling
// (its seed, the draw's index as the step). A decoded token repeats the context when the token
// before it occurred earlier and was followed there (the latest time) by this same token: what
// a copying head proposes. Kept per model (loaded once per process, so its address names it),
// sequence and sampling settings, so loop_share and loop_prob over many sequences decode each once.
const Decoded& decode_loop(const model::Model& m, const model::PassModel& pm, std::vector<int32_t> tokens,
                           model::SamplingOptions o) {
  static std::mutex mutex;
  static std::map<std::string, Decoded> done;
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(&m)) + "|" + std::to_string(o.temperature) + "|" +
                    std::to_string(o.top_k) + "|" + std::to_string(o.top_p) + "|" + std::to_string(o.seed);
  for (const int32_t t : tokens) key += "," + std::to_string(t);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = done.find(key); it != done.end()) return it->second;
  const int64_t start = static_cast<int64_t>(tokens.size());
  if (start >= m.config.seq_len) throw Error("model.loop_share: the sequence leaves no position to decode (use a smaller repeat)");
  Decoded d;
  int64_t loops = 0;
  for (int64_t i = 0; start + i < m.config.seq_len; ++i) {
    const model::WholeTrace w = model::whole_forward(pm, tokens);
    const Tensor& logits = w.logits();  // (1,T,V)
    o.step = i;
    const Trace tr = model::sampling_trace(logits.narrow(1, logits.size(1) - 1, 1).contiguous(), o);
    const auto next = static_cast<int32_t>(tr.at("next_token").out.f32()[0]);
    if (const int32_t loop = loop_token(tokens); loop >= 0) {
      d.loop_probs.push_back(tr.at("probs").out.f32()[loop]);
      loops += loop == next;
    }
    tokens.push_back(next);
  }
  d.share = static_cast<double>(loops) / static_cast<double>(m.config.seq_len - start);
  d.seen = static_cast<double>(d.loop_probs.size()) / static_cast<double>(m.config.seq_len - start);
  return done.emplace(key, std::move(d)).first->second;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// BOS + r + r: row `index` of the repeated batch the fields read (row 0 is the app's sequence).
model::Batch sequences(const model::Model& m, const ModelSettings& s, int64_t count) {
  return model::repeated_batch(m.config.vocab, s.repeat.value_or(kRepeat), count, kSeed);
}
std::vector<int32_t> row(const model::Batch& b, int64_t index) {
  const auto first = b.tokens.begin() + index * b.len;
  return {first, first + b.len};
}

// Field f on one whole sequence BOS + r + r (`full`): third_copy_prob reads it whole, every
// other field without its last token.
Value field_on(const model::Model& m, const model::PassModel& pm, const ModelSettings& s, const std::string& f,
               std::vector<int32_t> full) {
  const model::SamplingOptions o = sampling_options(s);
  if (f == "third_copy_prob") {  // after the whole second copy: a third one's first token under probs
    const model::WholeTrace w = model::whole_forward(pm, full);
    const Tensor& logits = w.logits();
    const Tensor last = logits.narrow(1, logits.size(1) - 1, 1).contiguous();  // (1,1,V)
    return static_cast<double>(model::sampling_trace(last, o).at("probs").out.f32()[loop_token(full)]);
  }
  full.pop_back();
  const std::vector<int32_t>& tokens = full;
  if (f == "loop_share") return decode_loop(m, pm, tokens, o).share;
  if (f == "loop_seen") return decode_loop(m, pm, tokens, o).seen;
  if (f == "loop_prob") {
    const Decoded& d = decode_loop(m, pm, tokens, o);
    if (d.loop_probs.empty()) throw Error("model.loop_prob: no decoded position has a loop token");
    return median(d.loop_probs);
  }
  if (f == "loop_tokens") return static_cast<double>(m.config.seq_len - static_cast<int64_t>(tokens.size()));
  const model::WholeTrace w = model::whole_forward(pm, tokens);
  if (f == "stream_embed") return mean_norm(w.model.at("embed").out);
  if (f == "stream_final") return mean_norm(model::block_output(pm, w.blocks.back()));
  if (f == "attn_write") return mean_norm(w.blocks[static_cast<size_t>(layer_of(m, s, f))].at("out").out);
  if (f == "mlp_steps") {
    double n = 0;
    for (const char* step : {"norm_mlp", "mlp_gate", "mlp_up", "mlp_act", "mlp_down", "resid_mlp"}) n += !w.blocks[0].at(step).skipped();
    return n;
  }
  if (f == "norm_steps") {
    double n = !w.model.at("norm_final").skipped();
    for (const Trace& block : w.blocks) n += !block.at("norm_attn").skipped() + !block.at("norm_mlp").skipped();
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

// prompts_*: the table's `of` on each of its first `prompts` sequences, then their mean,
// median (the mean of the middle two for an even count), least or largest. The values are kept
// per model and table, so a text's median and range read them once.
double over_prompts(const model::Model& m, const model::PassModel& pm, const ModelSettings& s, const std::string& f) {
  if (!s.prompts || *s.prompts < 1 || *s.prompts > kMaxPrompts)
    throw Error("model." + f + " reads several sequences: give the model table prompts = 1.." + std::to_string(kMaxPrompts));
  const std::string of = s.of.value_or("");
  if (!is_whole_field(of) || of.rfind("prompts", 0) == 0 || of == "temperature" || of == "top_k" || of == "top_p" ||
      of == "seed")
    throw Error("model." + f + ": of = \"" + of + "\" must name a field of one sequence (loop_share, sample_top_prob, ...)");
  auto text = [](const auto& v) { return v ? std::to_string(*v) : std::string("-"); };
  const std::string key = std::to_string(reinterpret_cast<uintptr_t>(&m)) + "|" + of + "|" + text(s.prompts) + "|" +
                          text(s.repeat) + "|" + text(s.layer) + "|" + text(s.head) + "|" + text(s.temperature) + "|" +
                          text(s.top_k) + "|" + text(s.top_p) + "|" + text(s.seed);
  static std::mutex mutex;
  static std::map<std::string, std::vector<double>> done;
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<double>& values = done[key];
  if (values.empty()) {
    const model::Batch b = sequences(m, s, *s.prompts);
    std::vector<double> fresh;  // filled whole before it is kept: a throw leaves no half list
    for (int64_t i = 0; i < *s.prompts; ++i) fresh.push_back(std::get<double>(field_on(m, pm, s, of, row(b, i))));
    values = std::move(fresh);
  }
  if (f == "prompts_min") return *std::min_element(values.begin(), values.end());
  if (f == "prompts_max") return *std::max_element(values.begin(), values.end());
  if (f == "prompts_median") return median(values);
  double sum = 0;
  for (const double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

}  // namespace

// BOS + r + r without its last token: the last position's answer is r's last token, which a
// model that copies can read off the first copy (after a whole second copy nothing predicts
// what comes next, and the readings there are of a guess).
std::vector<int32_t> step_whole_sequence(const model::Model& m, const LessonStep& step) {
  for (const Claim& c : step.claims)
    if (c.quantity.rfind("model.", 0) == 0 && !c.model.runs) return whole_sequence(m, c.model);
  return whole_sequence(m, ModelSettings{});
}

std::vector<int32_t> whole_sequence(const model::Model& m, const ModelSettings& s) {
  std::vector<int32_t> tokens = row(sequences(m, s, 1), 0);
  tokens.pop_back();
  return tokens;
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
  model::validate_sampling(sampling_options(s), m.config.vocab);
  const model::PassModel pm = model::pass_model(m);
  if (f.rfind("prompts_", 0) == 0) return over_prompts(m, pm, s, f);
  return field_on(m, pm, s, f, row(sequences(m, s, 1), 0));
}

}  // namespace attnsim::lessons
