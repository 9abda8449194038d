// Options shared by `trace`, `bench` and `flash`: model sizes, inputs, weights, masks.
// Each command adds them to its CLI11 subcommand, then turns them into the engine's
// MhaConfig / MhaWeights / MhaInputs (throwing attnsim::Error on bad input).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "engine/mha.h"

namespace attnsim::cli {

struct ModelOptions {
  int64_t batch = 32, tq = 128, tk = 0, d_model = 512, heads = 8;  // the article's shape
  int64_t kv_heads = 0;        // g (GQA); 0 = heads
  bool kv_repeat_copy = false;  // repeat_interleave copy instead of the stride-0 view
  uint64_t seed = 0;
  bool no_bias = false;
  std::string input, query, key, value;  // .npy paths
  std::string weights;                   // directory of W_Q.weight.npy, ...
  std::string mask = "none";
  std::string mask_file;
  std::string mask_bug;  // inverted | two-fills | additive | finite-fill
  std::string bug;       // any name from bugs.h
  float dropout = 0.0f;
  bool train = false;
  bool wo_identity = false;
  std::string mem_limit;  // "8G", "512M", bytes
  std::string backend = "cpu";
};

void add_model_options(CLI::App& cmd, ModelOptions& o);

struct Model {
  MhaConfig config;
  MhaWeights weights;
  MhaInputs inputs;
};

// Reads every file named in the options and checks every size against the others.
Model build_model(const ModelOptions& o);

// "8G" -> 8·2³⁰; throws Error for anything else.
int64_t parse_size(const std::string& text);

// Writes `fill(dir)` into a fresh temporary folder next to `dir`, then renames it into place,
// so a failed run never leaves a half-written dump. `dir` must not exist or be empty.
void write_folder_atomically(const std::string& dir, const std::function<void(const std::string&)>& fill);

}  // namespace attnsim::cli
