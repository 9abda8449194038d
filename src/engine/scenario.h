// Scenarios: named presets the app, the CLI and lessons share. Pure data plus the function
// that turns a preset into an MhaConfig and MhaInputs. No GUI.
//
//   default            self-attention over a short Korean sentence, d_model 16, 4 heads
//   default-en         the same in English
//   cross              cross-attention: 6 query tokens, 4 key tokens (non-square scores)
//   article            the article's shape: B=32, T=128, d_model=512, h=8 (random inputs)
//   query-padding-nan  a padded batch whose padded query rows are fully hidden -> NaN
//   decode, decode-gqa, decode-mqa, decode-paged, decode-sink   token-by-token decode over a
//                      KV cache (MHA, GQA g=2, MQA, a paged pool, sinks + window); the
//                      forward run is the prompt's causal pass with the same heads
//   decode-model, decode-model-sinks   the same on the trained model (assets/models/induction):
//                      a repeat the induction heads copy, and sink 1 + window vs a plain window
//   mask-inverted, mask-two-fills, mask-additive, mask-finite-fill, softmax-wrong-axis,
//   no-scale, softmax-no-max-fp16, view-without-contiguous   one per teaching bug
//
// A bug-lab scenario carries a reference: the correct run it is shown beside.
//
// Tokens: a sentence is split on whitespace; batch element b uses sentences[b] (the last one
// repeats), padded with "<pad>" or truncated to Tq. Each token becomes a vector by a
// deterministic embedding of its UTF-8 text, so the same word always gives the same row and
// editing the sentence recomputes everything downstream.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mha.h"

namespace attnsim {

inline constexpr const char* kPadToken = "<pad>";

// A decode scenario: the stack of decode_stack.h run over these prompts (printable ASCII),
// or, when `trained`, the trained model's stack (src/model/experiments/decode.h: its weights, sizes and
// alphabet; the app opens the shipped checkpoint or --model), which the engine alone cannot
// load: stack_config_for() refuses those.
struct DecodePreset {
  bool enabled = false;
  bool trained = false;
  std::string model;       // trained: a shipped run ("wordnet-lm-s1"); "" = --model or the toy checkpoint
  std::vector<std::string> prompts;
  int64_t steps = 0;       // tokens generated after the longest prompt
  int64_t layers = 2;
  int64_t t_max = 0;       // 0 = longest prompt + steps
  int64_t block_size = 0;  // 0 = contiguous cache; > 0 = paged
  std::string policy = "full";
};

struct Scenario {
  std::string name;                     // "default", "query-padding-nan", ...
  std::string title_en, title_ko;
  std::string summary_en, summary_ko;   // one or two lines for the bug lab and --help
  std::vector<std::string> sentences;   // one per batch element; empty = random inputs
  std::vector<std::string> key_sentences;  // cross-attention keys/values; empty = self
  MhaConfig config;
  bool has_reference = false;           // bug-lab cases: the correct run beside it
  MhaConfig reference;
  float input_scale = 1.0f;             // multiplies the embeddings (large logits on purpose)
  std::string focus_step;               // the step to open on ("alpha", ...)
  int64_t focus_batch = 0;              // the batch element to open on
  DecodePreset decode;                  // decode scenarios: the panel's run
  // The user's own tensors (the app's file import), used instead of the sentences'
  // embeddings and the seeded weights when set: a (B, T, d) self-attention input, and
  // weights read from W_Q.weight.npy ... (torch.nn.Linear layout).
  Tensor user_input;
  std::shared_ptr<const MhaWeights> user_weights;
};

const std::vector<Scenario>& all_scenarios();
// Throws Error listing the valid names.
const Scenario& find_scenario(const std::string& name);
std::vector<std::string> scenario_names();

// Whitespace split (spaces, tabs, newlines); UTF-8 passes through untouched.
std::vector<std::string> split_tokens(const std::string& sentence);

// Tokens for every batch element: sentences[b] (last one repeated), padded with kPadToken
// or truncated to `length`. Empty `sentences` gives "t0", "t1", ... labels.
std::vector<std::vector<std::string>> batch_tokens(const std::vector<std::string>& sentences,
                                                   int64_t batch, int64_t length);

// One row of d_model values for a token, deterministic in the token's bytes.
std::vector<float> embed_token(const std::string& token, int64_t d_model);
// (B, T, d) tensor of embeddings.                                          // new storage
Tensor embed_tokens(const std::vector<std::vector<std::string>>& tokens, int64_t d_model);

// Single input cells the user edited: (b, t, j) -> value, applied after the embedding.
using CellEdits = std::map<std::vector<int64_t>, float>;

// Inputs for a config: embeddings of the sentences (or random_inputs when there are none)
// times input_scale, then the edits. Self-attention uses one tensor for query, key and
// value. Throws Error when an edit lies outside the query's shape.
MhaInputs scenario_inputs(const MhaConfig& config, const std::vector<std::string>& sentences,
                          const std::vector<std::string>& key_sentences,
                          float input_scale = 1.0f, const CellEdits& edits = {});
// The two halves of scenario_inputs, so a caller can keep the first while only edits change:
// the inputs before any edit, and the edits applied to a copy of the query (checked).
MhaInputs base_inputs(const MhaConfig& config, const std::vector<std::string>& sentences,
                      const std::vector<std::string>& key_sentences, float input_scale = 1.0f);
MhaInputs apply_edits(const MhaConfig& config, MhaInputs base, const CellEdits& edits);
// The same for a scenario's own config (or its reference).
MhaInputs scenario_inputs(const Scenario& scenario, bool reference = false);

}  // namespace attnsim
