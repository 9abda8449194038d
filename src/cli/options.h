// Options shared by `trace`, `bench` and `flash`: model sizes, inputs, weights, masks.
// Each command adds them to its CLI11 subcommand, then turns them into the engine's
// MhaConfig / MhaWeights / MhaInputs (throwing attnsim::Error on bad input).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "engine/atomic_file.h"  // write_folder_atomically, for the commands that dump
#include "engine/checked.h"
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

// Bytes the command itself will hold beyond the inputs and weights (the trace, the tiles).
using CorePrediction = std::function<int64_t(const MhaConfig&)>;

// Reads every file named in the options and checks every size against the others. Memory
// (inputs + mask + weights + core_bytes) is predicted from the options and the files'
// headers and refused over the limit before anything is allocated or read; `hint` ends that
// refusal (what to change).
Model build_model(const ModelOptions& o, const CorePrediction& core_bytes, const std::string& hint = "");

// A CLI11 check for integer options: the whole text a decimal in [lo, hi], refused (not
// clamped) otherwise.
CLI::Validator whole_number(int64_t lo, int64_t hi);
// CLI11 checks for a seed (0 to 2^64-1, no sign) and a --mem-limit size (parse_size).
CLI::Validator seed_number();
// A CLI11 check for real options (--lr, --weight-decay, --clip): parse_real's grammar and the
// range every reader of that setting uses (model/adamw.h), so "", "nan", "-1" are refused
// at parse time, as a checkpoint's recipe with the same value is refused on load.
CLI::Validator real_number(RealRange range);
CLI::Validator mem_limit_size();
// A CLI11 check for paths and names: an empty value is refused, not taken as "not given".
CLI::Validator not_empty();

// --mem-limit: "8G" -> 8·2³⁰; throws Error for anything else (1 byte to 4 EiB, never clamped).
int64_t parse_size(const std::string& text);

}  // namespace attnsim::cli
