// Decode through a stack of the engine's attention layers: random weights over a
// printable-ASCII vocabulary, or the weights of a trained attention-only model.
//
//   x      = E[token] + P[position]                     (rows, d)   E (V,d), P (T_max,d)
//   x      = x + attention_l(x)      for l = 0..L-1     each layer's K/V in its own cache
//   logits = x · Uᵀ + b                                 (rows, V)   U (V,d)
//   next   = argmax(logits of the last row)             greedy
//
// With random weights the text means nothing; what it shows is real either way: every
// layer's cache, the traces of every step, the bytes. Sequences decode together: with a
// contiguous cache as one batch (equal prompt lengths), with a paged cache one trace per
// sequence sharing one block pool (any lengths).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "decode.h"
#include "scenario.h"

namespace attnsim {

inline constexpr int64_t kVocabFirst = 32;  // ' '
inline constexpr int64_t kVocabSize = 95;   // ' ' .. '~'
std::vector<int64_t> encode_text(const std::string& text);  // Error on a byte outside ' '..'~'
std::string decode_text(const std::vector<int64_t>& tokens);

struct StackConfig {
  MhaConfig attn;           // d_model, heads, kv_heads, bias, seed, kv_repeat_copy (sizes per call)
  int64_t layers = 2;
  int64_t t_max = 64;       // longest sequence (prompt + generated)
  CachePolicy policy;       // contiguous only; paged keeps every position
  int64_t block_size = 0;   // 0: contiguous cache; > 0: paged with blocks of this many positions
  int64_t pool_blocks = 0;  // paged: blocks in the pool; 0: enough for every sequence at T_max
  int64_t prefill_rows = 0; // most prompt tokens the prefill feeds at once (0: all that fit);
                            // the rest go one per step, as in teacher-forced decoding
};

// The stack a decode scenario runs (scenario.decode with scenario.config's heads); `policy`
// overrides the preset's when not empty. Throws Error for a scenario without decode.
StackConfig stack_config_for(const Scenario& scenario, const std::string& policy = "");
std::vector<std::vector<int64_t>> prompts_for(const Scenario& scenario);

// Throws Error for anything the stack cannot run (and says why in one line).
void validate(const StackConfig& config, const std::vector<std::vector<int64_t>>& prompts);

// Bytes a decode run holds at its end when every call's traces are kept (as the CLI keeps
// them for its table and --dump): the random weights (when `random_weights`; a caller with
// its own adds theirs), every layer's cache, and per call and layer the trace (scores,
// softmax, projections; a paged gather's K/V copy) and the hidden rows, for a prefill and
// then one call per token until `last_length` tokens. Predicted from sizes alone, in long
// double (saturating at 2^62), before anything is allocated.
int64_t predict_decode_bytes(const StackConfig& config, const std::vector<std::vector<int64_t>>& prompts,
                             int64_t last_length, bool random_weights);

// Weights a caller brings instead of random ones (a trained model, see src/model/experiments/decode.h):
//   embedding (V,d)  position (P,d) with P >= T_max, or undefined where the attention turns q
//   and k by position instead (RoPE: config.attn.rope_theta > 0)  layers[l]  unembedding (V,d)
//   unembedding_bias (V) or an empty tensor.
// Token ids are 0..V-1; what text they stand for is the caller's business.
// A model whose blocks hold more than attention and a residual (norms, an MLP) brings its
// block: `block` runs layer l on the stream x (B,n,d), calling `attend` on attention's input
// (the stack's cached call over layer l's cache), adds its steps to `trace` and returns the
// block's output; `final_norm` maps the last block's output before the unembedding. The
// engine knows no norm or MLP: the model's pass does (src/model/pass/whole_pass.h).
using Attend = std::function<Trace(const Tensor& x)>;
struct StackWeights {
  Tensor embedding, position, unembedding, unembedding_bias;
  std::vector<MhaWeights> layers;
  std::function<Tensor(int64_t layer, const Tensor& x, const Attend& attend, Trace& trace)> block;  // unset: x + attention(x)
  std::function<Tensor(const Tensor& x)> final_norm;                                             // unset: none
};
// The random stack: ASCII vocabulary (95), N(0,1) embeddings, 0.5·N(0,1) positions, each
// layer's weights from the seed.
StackWeights random_stack_weights(const StackConfig& config);

// One call of prefill() or step().
struct DecodeStep {
  int64_t first_position = 0;  // of sequence 0's rows fed (contiguous: every sequence's)
  int64_t rows = 0;            // the call's rows: a prefill's chunk, or 1 (paged: the longest)
  std::vector<int64_t> fed_rows;  // per sequence: rows fed (a paged prefill feeds each prompt whole)
  std::vector<int64_t> fed;    // per sequence: the token fed last
  std::vector<int64_t> next;   // per sequence: argmax of the last row's logits
  bool generated = false;      // the fed tokens were generated, not prompt
  // traces[unit][layer]: unit = the batch (contiguous) or one sequence (paged)
  std::vector<std::vector<Trace>> traces;
  std::vector<Tensor> hidden;  // per sequence: (rows, d) the last layer's output (through the final norm
                               // when the weights bring one): what the unembedding reads
};

class Decoder {
 public:
  Decoder(StackConfig config, std::vector<std::vector<int64_t>> prompts);
  // Throws Error when the weights do not fit the config (shapes, layers, T_max, token ids).
  Decoder(StackConfig config, std::vector<std::vector<int64_t>> prompts, StackWeights weights);

  // Feeds each prompt's first min(P, cache slots) tokens at once.
  DecodeStep prefill();
  // Feeds one token per sequence: the next prompt token while any is left, else the token
  // the last call predicted. Error past T_max.
  DecodeStep step();

  const StackConfig& config() const { return config_; }
  int64_t sequences() const { return static_cast<int64_t>(prompts_.size()); }
  int64_t length() const;  // tokens fed so far (contiguous: shared; paged: the longest)
  const std::vector<int64_t>& tokens(int64_t seq) const { return tokens_[seq]; }  // fed so far
  const std::vector<int64_t>& prompt(int64_t seq) const { return prompts_[seq]; }
  const std::vector<MhaWeights>& layer_weights() const { return weights_.layers; }
  int64_t vocab() const { return weights_.embedding.size(0); }
  bool paged() const { return config_.block_size > 0; }
  const std::vector<KvCache>& caches() const { return caches_; }   // contiguous, per layer
  const std::vector<PagedKv>& pools() const { return pools_; }     // paged, per layer
  const BlockPool& block_pool() const { return block_pool_; }      // paged
  const std::vector<BlockTable>& tables() const { return tables_; }  // paged, per sequence
  // Bytes of every cache storage allocated, K and V, all layers.
  int64_t cache_storage_bytes() const;
  // Bytes of cache the sequences' tokens occupy: 2·L·g·dk·4 per cached position.
  int64_t cache_used_bytes() const;

  // The reference: every fed token of sequence `seq` through forward() with a causal mask
  // (and the policy's evictions as a mask), layer by layer; (T, d) as `hidden` is.
  Tensor full_forward(int64_t seq) const;

 private:
  Tensor embed(int64_t seq, int64_t first, int64_t rows) const;  // (1, rows, d)
  // layer l on x (B,n,d) with `attend` as its attention; the layer's steps land in `trace`
  Tensor layer(int64_t l, const Tensor& x, const Attend& attend, Trace& trace) const;
  Tensor last_norm(const Tensor& x) const;
  DecodeStep feed(int64_t rows);

  StackConfig config_;
  std::vector<std::vector<int64_t>> prompts_, tokens_;
  std::vector<int64_t> pending_next_;
  StackWeights weights_;
  std::vector<KvCache> caches_;
  std::vector<PagedKv> pools_;
  BlockPool block_pool_{1, 1};
  std::vector<BlockTable> tables_;
};

}  // namespace attnsim
