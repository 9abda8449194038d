#include "decode_stack.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cost.h"
#include "error.h"
#include "random.h"

namespace attnsim {

std::vector<int64_t> encode_text(const std::string& text) {
  std::vector<int64_t> tokens;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (ch < kVocabFirst || ch >= kVocabFirst + kVocabSize)
      throw Error("the random-weight stack reads printable ASCII only; byte " + std::to_string(ch) +
                  " at offset " + std::to_string(i) + " of the prompt is not");
    tokens.push_back(ch - kVocabFirst);
  }
  return tokens;
}

std::string decode_text(const std::vector<int64_t>& tokens) {
  std::string s;
  for (int64_t t : tokens) s += static_cast<char>(kVocabFirst + t);
  return s;
}

StackConfig stack_config_for(const Scenario& s, const std::string& policy) {
  if (!s.decode.enabled) throw Error("scenario '" + s.name + "' is not a decode scenario");
  if (s.decode.trained)
    throw Error("scenario '" + s.name + "' decodes the trained model: its stack comes from the checkpoint");
  StackConfig sc;
  sc.attn = s.config;
  sc.layers = s.decode.layers;
  int64_t longest = 0;
  for (const auto& p : s.decode.prompts) longest = std::max<int64_t>(longest, static_cast<int64_t>(p.size()));
  sc.t_max = s.decode.t_max > 0 ? s.decode.t_max : longest + s.decode.steps;
  sc.block_size = s.decode.block_size;
  sc.policy = parse_cache_policy(policy.empty() ? s.decode.policy : policy);
  return sc;
}

std::vector<std::vector<int64_t>> prompts_for(const Scenario& s) {
  if (s.decode.trained)
    throw Error("scenario '" + s.name + "' decodes the trained model: its prompts are in the model's alphabet");
  std::vector<std::vector<int64_t>> prompts;
  for (const auto& p : s.decode.prompts) prompts.push_back(encode_text(p));
  return prompts;
}

static int64_t blocks_for(int64_t positions, int64_t block) { return (positions + block - 1) / block; }

void validate(const StackConfig& c, const std::vector<std::vector<int64_t>>& prompts) {
  MhaConfig m = c.attn;
  m.batch = 1;
  m.tq = m.tk = 1;
  m.self_attention = true;
  validate(m);
  if (c.layers <= 0) throw Error("layers must be positive, got " + std::to_string(c.layers));
  if (c.t_max <= 0) throw Error("T_max must be positive, got " + std::to_string(c.t_max));
  if (c.block_size < 0) throw Error("the block size must be positive, got " + std::to_string(c.block_size));
  if (c.prefill_rows < 0) throw Error("the prefill chunk must not be negative, got " + std::to_string(c.prefill_rows));
  if (prompts.empty()) throw Error("decode needs at least one prompt");
  for (const auto& p : prompts) {
    if (p.empty()) throw Error("a prompt must hold at least one token");
    if (static_cast<int64_t>(p.size()) > c.t_max)
      throw Error("the prompt of " + std::to_string(p.size()) + " tokens is longer than T_max " +
                  std::to_string(c.t_max));
    if (c.block_size == 0 && p.size() != prompts[0].size())
      throw Error("prompts of different lengths (" + std::to_string(prompts[0].size()) + " and " +
                  std::to_string(p.size()) + ") share one contiguous batch only with padding; use --cache paged:BLOCK");
  }
  check_policy(c.policy, c.t_max);
  if (c.block_size > 0 && c.policy.kind != PolicyKind::Full)
    throw Error("eviction policies run on the contiguous cache; the paged cache keeps every position (--policy full)");
  const int64_t S = static_cast<int64_t>(prompts.size()), g = m.kv_group_count(), dk = m.head_dim();
  const int64_t slots = c.block_size > 0
                            ? (c.pool_blocks > 0 ? c.pool_blocks : S * blocks_for(c.t_max, c.block_size)) * c.block_size
                            : S * c.policy.slots(c.t_max);
  const double bytes = 2.0 * c.layers * g * dk * 4.0 * static_cast<double>(slots);
  const int64_t limit = effective_mem_limit(m);
  if (bytes > static_cast<double>(limit))
    throw Error("the KV cache would need " +
                (bytes < 0x1p62 ? human_bytes(static_cast<int64_t>(bytes)) : std::string("more than 4 EiB")) +
                ", over the limit of " + human_bytes(limit));
}

int64_t predict_decode_bytes(const StackConfig& c, const std::vector<std::vector<int64_t>>& prompts, int64_t last_length,
                             bool random_weights) {
  using R = long double;
  const MhaConfig& a = c.attn;
  const R f = 4, d = static_cast<R>(a.d_model), h = static_cast<R>(a.heads), kv = static_cast<R>(a.kv_dim());
  const R L = static_cast<R>(c.layers), S = static_cast<R>(prompts.size());
  int64_t longest = 0;
  for (const auto& p : prompts) longest = std::max<int64_t>(longest, static_cast<int64_t>(p.size()));
  const bool paged = c.block_size > 0;
  const int64_t slots = paged ? c.t_max : c.policy.slots(c.t_max);
  R bytes = 0;
  if (random_weights)
    bytes += (2 * kVocabSize * d + static_cast<R>(c.t_max) * d) * f + L * static_cast<R>(predict_weight_bytes(a.d_model, a.bias));
  const R cache_slots = paged ? S * static_cast<R>(blocks_for(c.t_max, c.block_size)) * static_cast<R>(c.block_size)
                              : S * static_cast<R>(slots);
  bytes += 2 * L * cache_slots * kv * f;  // K and V, (g·dk) floats per slot and layer
  // one call of `rows` rows over `keys` keys, every layer: four score-sized tensors (scores,
  // scaled, masked, alpha), ten (rows, d)-sized ones, the gathered K/V and the hidden rows
  // plus about 4 KiB per trace for its 23 step records and tensor headers (measured: 800
  // layers of 13 calls each held 43 MB more than their tensors)
  const R per_trace = 4096;
  auto call = [&](R rows, R keys) { return L * S * ((4 * h * rows * keys + 10 * rows * d + 2 * keys * kv) * f + per_trace); };
  int64_t first = std::min<int64_t>(longest, slots);
  if (c.prefill_rows > 0) first = std::min<int64_t>(first, c.prefill_rows);
  bytes += call(static_cast<R>(first), static_cast<R>(first));
  // calls feeding one token each, at lengths first+1 .. last_length, the keys capped at the slots
  const R n = static_cast<R>(std::max<int64_t>(0, last_length - first));
  const R lo = static_cast<R>(first) + 1, cap = static_cast<R>(slots);
  const R growing = std::max<R>(0, std::min<R>(n, cap - lo + 1));  // calls whose keys still grow
  const R keys_sum = growing * (lo + lo + growing - 1) / 2 + (n - growing) * cap;
  bytes += L * S * ((4 * h * keys_sum + 10 * n * d + 2 * keys_sum * kv) * f + n * per_trace);
  return bytes > 0x1p62L ? static_cast<int64_t>(0x1p62) : static_cast<int64_t>(bytes);
}

StackWeights random_stack_weights(const StackConfig& config) {
  const MhaConfig& a = config.attn;
  const int64_t d = a.d_model;
  StackWeights w;
  w.embedding = Tensor::empty({kVocabSize, d});  // (95,d)
  for (int64_t i = 0; i < w.embedding.numel(); ++i)
    w.embedding.f32()[i] = random_normal(a.seed, static_cast<uint64_t>(Stream::Embed), i);
  w.unembedding = Tensor::empty({kVocabSize, d});  // (95,d)
  for (int64_t i = 0; i < w.unembedding.numel(); ++i)
    w.unembedding.f32()[i] = random_normal(a.seed, static_cast<uint64_t>(Stream::Unembed), i);
  w.position = Tensor::empty({config.t_max, d});  // (T_max,d)
  for (int64_t i = 0; i < w.position.numel(); ++i)
    w.position.f32()[i] = 0.5f * random_normal(a.seed, static_cast<uint64_t>(Stream::Position), i);
  for (int64_t l = 0; l < config.layers; ++l)
    w.layers.push_back(init_weights(d, a.bias, a.seed + 7919 * static_cast<uint64_t>(l + 1), a.kv_dim()));
  return w;
}

// The caller's weights against the config: every shape, so a mismatch is one line here and
// not a wrong read later.
static void check_weights(const StackConfig& c, const StackWeights& w, const std::vector<std::vector<int64_t>>& prompts) {
  const int64_t d = c.attn.d_model;
  auto shape_is = [](const Tensor& t, std::vector<int64_t> want, const char* name) {
    if (t.shape() != want) throw Error(std::string("decode weights: ") + name + " is " + format_dims(t.shape()) +
                                       ", the stack needs " + format_dims(want));
  };
  if (w.embedding.dim() != 2) throw Error("decode weights: the embedding must be (V,d)");
  const int64_t V = w.embedding.size(0);
  shape_is(w.embedding, {V, d}, "the embedding");
  shape_is(w.unembedding, {V, d}, "the unembedding");
  if (w.unembedding_bias.defined()) shape_is(w.unembedding_bias, {V}, "the unembedding bias");
  if (!w.position.defined() && !(c.attn.rope_theta > 0))
    throw Error("decode weights: a model without a position table must turn q and k by position (RoPE)");
  if (w.position.defined() && (w.position.dim() != 2 || w.position.size(1) != d))
    throw Error("decode weights: the positions must be (P,d)");
  if (w.position.defined() && w.position.size(0) < c.t_max)
    throw Error("T_max " + std::to_string(c.t_max) + " is longer than the " + std::to_string(w.position.size(0)) +
                " positions the model was trained with");
  if (static_cast<int64_t>(w.layers.size()) != c.layers)
    throw Error("decode weights: " + std::to_string(w.layers.size()) + " layers, the stack has " + std::to_string(c.layers));
  for (const auto& p : prompts)
    for (int64_t t : p)
      if (t < 0 || t >= V) throw Error("token " + std::to_string(t) + " is outside the vocabulary of " + std::to_string(V));
}

// Validated before the random weights exist: T_max sizes the position table.
static StackWeights checked_random_weights(const StackConfig& config, const std::vector<std::vector<int64_t>>& prompts) {
  validate(config, prompts);
  return random_stack_weights(config);
}

Decoder::Decoder(StackConfig config, std::vector<std::vector<int64_t>> prompts)
    : Decoder(config, prompts, checked_random_weights(config, prompts)) {}

Decoder::Decoder(StackConfig config, std::vector<std::vector<int64_t>> prompts, StackWeights weights)
    : config_(std::move(config)), prompts_(std::move(prompts)), weights_(std::move(weights)) {
  validate(config_, prompts_);
  check_weights(config_, weights_, prompts_);
  const MhaConfig& a = config_.attn;
  const int64_t S = sequences(), g = a.kv_group_count(), dk = a.head_dim();
  tokens_.resize(S);
  pending_next_.assign(S, 0);
  if (paged()) {
    const int64_t blocks = config_.pool_blocks > 0 ? config_.pool_blocks : S * blocks_for(config_.t_max, config_.block_size);
    block_pool_ = BlockPool(blocks, config_.block_size);
    for (int64_t l = 0; l < config_.layers; ++l) pools_.emplace_back(blocks, g, config_.block_size, dk);
    tables_.resize(S);
  } else {
    for (int64_t l = 0; l < config_.layers; ++l) caches_.emplace_back(S, g, dk, config_.t_max, config_.policy);
  }
}

int64_t Decoder::length() const {
  int64_t n = 0;
  for (const auto& t : tokens_) n = std::max<int64_t>(n, static_cast<int64_t>(t.size()));
  return n;
}

Tensor Decoder::embed(int64_t seq, int64_t first, int64_t rows) const {
  const int64_t d = config_.attn.d_model;
  Tensor x = Tensor::empty({1, rows, d});  // (1,rows,d)
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t tok = tokens_[seq][first + i];
    for (int64_t e = 0; e < d; ++e)
      x.f32()[i * d + e] = weights_.embedding.f32()[tok * d + e] +
                           (weights_.position.defined() ? weights_.position.f32()[(first + i) * d + e] : 0.0f);
  }
  return x;
}

// x += y for two contiguous tensors of one shape
static Tensor add(const Tensor& x, const Tensor& y) {
  Tensor out = x.clone();
  const Tensor yc = y.contiguous();
  for (int64_t i = 0; i < out.numel(); ++i) out.f32()[i] += yc.f32()[i];
  return out;
}

Tensor Decoder::layer(int64_t l, const Tensor& x, const Attend& attend, Trace& trace) const {
  if (weights_.block) return weights_.block(l, x, attend, trace);
  trace = attend(x);
  return add(x, trace.at("out").out);  // residual
}

Tensor Decoder::last_norm(const Tensor& x) const { return weights_.final_norm ? weights_.final_norm(x) : x; }

// A layer whose trace holds NaN or inf (weights that overflow float32) ends the decode: its
// tokens would be argmaxes of NaN.
static void require_finite(const Trace& t, int64_t layer) {
  if (const std::string bad = t.first_nonfinite_step(); !bad.empty())
    throw Error("decode: layer " + std::to_string(layer) + "'s " + bad +
                " holds non-finite values (the weights overflow float32); first non-finite tensor: layer_" +
                std::to_string(layer) + "/" + bad);
}

// argmax over the vocabulary of row · Uᵀ + b
static int64_t greedy(const float* row, const Tensor& unembedding, const Tensor& bias) {
  const int64_t V = unembedding.size(0), d = unembedding.size(1);
  int64_t best = 0;
  double best_logit = -1e300;
  for (int64_t v = 0; v < V; ++v) {
    double logit = bias.defined() ? bias.f32()[v] : 0.0;
    for (int64_t e = 0; e < d; ++e) logit += static_cast<double>(row[e]) * unembedding.f32()[v * d + e];
    if (!std::isfinite(logit))  // argmax over NaN would name token 0 as if it had won
      throw Error("decode: the logit of token " + std::to_string(v) +
                  " is not finite (the unembedding or the hidden state overflows float32)");
    if (logit > best_logit) best_logit = logit, best = v;
  }
  return best;
}

DecodeStep Decoder::feed(int64_t rows) {
  const int64_t S = sequences(), d = config_.attn.d_model;
  DecodeStep out;
  out.rows = rows;
  for (int64_t s = 0; s < S; ++s) {
    const int64_t len = static_cast<int64_t>(tokens_[s].size());
    out.fed_rows.push_back(paged() ? len - tables_[s].length : rows);
    out.fed.push_back(tokens_[s].back());
    out.generated = tokens_[s].size() > prompts_[s].size();
  }
  out.first_position = static_cast<int64_t>(tokens_[0].size()) - out.fed_rows[0];
  auto finish = [&](int64_t s, const Tensor& x_seq /*(n,d) rows of seq s*/) {
    const int64_t n = x_seq.size(0);
    out.hidden.push_back(x_seq);
    pending_next_[s] = greedy(x_seq.f32() + (n - 1) * d, weights_.unembedding, weights_.unembedding_bias);
    out.next.push_back(pending_next_[s]);
  };
  if (!paged()) {
    Tensor x = Tensor::empty({S, rows, d});  // (S,rows,d): every sequence at the same positions
    for (int64_t s = 0; s < S; ++s)
      std::memcpy(x.f32() + s * rows * d, embed(s, out.first_position, rows).f32(), rows * d * sizeof(float));
    out.traces.emplace_back();
    for (int64_t l = 0; l < config_.layers; ++l) {
      Trace t;
      x = layer(l, x, [&](const Tensor& h) { return attend_cached(config_.attn, weights_.layers[l], caches_[l], h); }, t);
      require_finite(t, l);
      out.traces[0].push_back(std::move(t));
    }
    x = last_norm(x);
    for (int64_t s = 0; s < S; ++s) finish(s, x.narrow(0, s, 1).view({rows, d}));
    return out;
  }
  for (int64_t s = 0; s < S; ++s) {  // paged: each sequence on its own, one shared pool
    BlockTable& table = tables_[s];
    const int64_t n = out.fed_rows[s];
    reserve_blocks(block_pool_, table, table.length + n);
    Tensor x = embed(s, table.length, n);  // (1,n,d)
    out.traces.emplace_back();
    for (int64_t l = 0; l < config_.layers; ++l) {
      Trace t;
      x = layer(l, x, [&](const Tensor& h) { return attend_paged(config_.attn, weights_.layers[l], pools_[l], table, h); }, t);
      require_finite(t, l);
      out.traces.back().push_back(std::move(t));
    }
    table.length += n;
    finish(s, last_norm(x).view({n, d}));
  }
  return out;
}

DecodeStep Decoder::prefill() {
  if (length() > 0) throw Error("prefill runs once, before the first step");
  int64_t rows = 0;
  for (int64_t s = 0; s < sequences(); ++s) {
    const int64_t p = static_cast<int64_t>(prompts_[s].size());
    int64_t n = paged() ? p : std::min(p, config_.policy.slots(config_.t_max));
    if (config_.prefill_rows > 0) n = std::min(n, config_.prefill_rows);
    tokens_[s].assign(prompts_[s].begin(), prompts_[s].begin() + n);
    rows = std::max(rows, n);
  }
  return feed(rows);
}

DecodeStep Decoder::step() {
  for (int64_t s = 0; s < sequences(); ++s) {
    const size_t len = tokens_[s].size();
    if (static_cast<int64_t>(len) >= config_.t_max)
      throw Error("the sequence has reached T_max " + std::to_string(config_.t_max) + "; raise --max-len");
    tokens_[s].push_back(len < prompts_[s].size() ? prompts_[s][len] : pending_next_[s]);
  }
  return feed(1);
}

int64_t Decoder::cache_storage_bytes() const {
  int64_t bytes = 0;
  for (const auto& c : caches_) bytes += c.storage_bytes();
  for (const auto& p : pools_) bytes += p.storage_bytes();
  return bytes;
}

int64_t Decoder::cache_used_bytes() const {
  const int64_t per_position = 2 * config_.layers * config_.attn.kv_dim() * 4;
  int64_t positions = 0;
  if (paged()) {
    for (const auto& t : tables_) positions += t.length;
  } else if (!caches_.empty()) {
    positions = sequences() * caches_[0].filled();
  }
  return positions * per_position;
}

Tensor Decoder::full_forward(int64_t seq) const {
  const int64_t T = static_cast<int64_t>(tokens_[seq].size()), d = config_.attn.d_model;
  MhaConfig c = config_.attn;
  c.batch = 1;
  c.tq = c.tk = T;
  c.self_attention = true;
  c.mask = parse_mask_spec("causal");
  Tensor evicted;  // (1,1,T,T) true where the policy has dropped key j by query i's turn
  if (config_.policy.kind != PolicyKind::Full) {
    evicted = Tensor::zeros({1, 1, T, T}, DType::Bool);
    for (int64_t i = 0; i < T; ++i) {
      const std::vector<int64_t> kept = kept_positions(config_.policy, i + 1);
      for (int64_t j = 0; j <= i; ++j)
        evicted.b8()[i * T + j] = !std::binary_search(kept.begin(), kept.end(), j);
    }
  }
  Tensor x = embed(seq, 0, T);
  for (int64_t l = 0; l < config_.layers; ++l) {
    Trace t;
    x = layer(l, x, [&](const Tensor& h) { return forward(c, weights_.layers[l], MhaInputs{h, h, h, evicted, {}}).trace; }, t);
  }
  return last_norm(x).view({T, d});
}

}  // namespace attnsim
