// The decode panel's run: a decode scenario's whole decode computed once, one frame per
// prefill or step, with what the panel draws copied out (the cache mutates as decode goes
// on, so each frame keeps its own snapshot). Random weights over printable ASCII, or for a
// `trained` scenario the checkpoint's weights and alphabet (model/decode.h). Pure
// computation, no OpenGL; tested without a window (tests/app/test_decode_run.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/decode_stack.h"
#include "engine/scenario.h"

namespace attnsim::app {

struct DecodeFrame {
  int64_t first_position = 0, rows = 0;  // sequence 0's rows fed in this call
  std::vector<int64_t> tokens;           // sequence 0: every token fed so far
  int64_t next = 0;                      // sequence 0: the predicted next token
  bool generated = false;
  // per layer, sequence 0
  std::vector<Tensor> k_cache;           // (g, t', dk) the filled K slots, a copy
  std::vector<Tensor> v_cache;           // (g, t', dk) the filled V slots, a copy
  std::vector<Tensor> alpha;             // (h, t') the last new row's weights over the slots
  std::vector<int64_t> slot_positions;   // position held by each filled slot
  std::vector<int64_t> append_slots;     // slots this call wrote (sequence 0)
  // Trained weights: the position an induction head should read for the last fed token (one
  // after that token's previous occurrence: what followed it last time), -1 for none.
  int64_t copy_source = -1;
  std::vector<Trace> traces;             // per layer: the call's trace (k_heads, k_cache_append, k_grouped, ...)
  int64_t used_bytes = 0;                // every sequence's cached positions, all layers
  // paged only
  std::vector<BlockTable> tables;
  std::vector<int64_t> free_list;
};

struct DecodeRun {
  StackConfig config;
  bool trained = false;              // the checkpoint's weights (model_dir), not random ones
  std::string model_dir;
  std::vector<std::string> labels;   // each token id as one visible label (space as "·")
  int64_t sequences = 0;
  int64_t prompt_length = 0;         // sequence 0's prompt, in tokens
  int64_t slots = 0;                 // contiguous: slots per sequence; paged: pool positions
  int64_t storage_bytes = 0;         // every cache storage, all layers
  std::vector<DecodeFrame> frames;
  // Sinks: for each position of sequence 0, |h_policy - h_full| / |h_full| of the last
  // layer's output, for the scenario's policy and for a plain window of the same size.
  std::vector<double> drift_policy, drift_window;
  std::string window_text;           // the plain window compared against, e.g. "window=8"
  // Trained weights and an evicting policy: per position p of sequence 0, the loss (nats) of
  // token p+1 teacher-forced on the same tokens, with every key (full), under the policy and
  // under the plain window. One shorter than the tokens.
  std::vector<double> loss_full, loss_policy, loss_window;
  const std::string& label(int64_t token) const;  // "?" outside the vocabulary
};

// The checkpoint a trained decode scenario opens: the shipped run its preset names
// ("decode-lm": wordnet-lm-s1), else `given` (--model), else default_model_dir().
std::string decode_model_dir(const DecodePreset& preset, const std::string& given);

// Runs the scenario's decode (policy overrides the preset's when not empty). A trained
// scenario opens decode_model_dir(its preset, model_dir). Throws Error.
DecodeRun run_decode(const Scenario& scenario, const std::string& policy = "", const std::string& model_dir = "");

// One after the latest earlier occurrence (at 1.. t-1) of the token at t = tokens.size() - 1,
// or -1: the slot an induction head reads to copy what followed it.
int64_t copy_source(const std::vector<int64_t>& tokens);

}  // namespace attnsim::app
