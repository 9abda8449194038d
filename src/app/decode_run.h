// The decode panel's run: a decode scenario's whole decode computed once, one frame per
// prefill or step, with what the panel draws copied out (the cache mutates as decode goes
// on, so each frame keeps its own snapshot). Pure computation, no OpenGL; tested without a
// window (tests/app/test_decode_run.cpp).
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
  std::vector<Tensor> alpha;             // (h, t') the last new row's weights over the slots
  std::vector<int64_t> slot_positions;   // position held by each filled slot
  std::vector<int64_t> append_slots;     // slots this call wrote (sequence 0)
  Trace layer0;                          // layer 0's trace (k_heads, k_cache_append, k_grouped, ...)
  int64_t used_bytes = 0;                // every sequence's cached positions, all layers
  // paged only
  std::vector<BlockTable> tables;
  std::vector<int64_t> free_list;
};

struct DecodeRun {
  StackConfig config;
  int64_t sequences = 0;
  int64_t slots = 0;                 // contiguous: slots per sequence; paged: pool positions
  int64_t storage_bytes = 0;         // every cache storage, all layers
  std::vector<DecodeFrame> frames;
  // Sinks: for each position of sequence 0, |h_policy - h_full| / |h_full| of the last
  // layer's output, for the scenario's policy and for a plain window of the same size.
  std::vector<double> drift_policy, drift_window;
  std::string window_text;           // the plain window compared against, e.g. "window=8"
};

// Runs the scenario's decode (policy overrides the preset's when not empty). Throws Error.
DecodeRun run_decode(const Scenario& scenario, const std::string& policy = "");

}  // namespace attnsim::app
