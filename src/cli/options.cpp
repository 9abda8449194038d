#include "options.h"

#include <cmath>
#include <limits>

#include "engine/checked.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/npy.h"

namespace attnsim::cli {

CLI::Validator whole_number(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        try {
          parse_int(text, "value", lo, hi);
        } catch (const Error& e) {
          return e.what();
        }
        return {};
      },
      "", "whole number");
}

CLI::Validator mem_limit_size() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          parse_size(text);
        } catch (const Error& e) {
          return e.what();
        }
        return {};
      },
      "", "size");
}

CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          parse_seed(text, "value");
        } catch (const Error& e) {
          return e.what();
        }
        return {};
      },
      "", "seed");
}

CLI::Validator real_number(RealRange range) {
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        try {
          parse_real(text, "value", range);
        } catch (const Error& e) {
          return e.what();
        }
        return {};
      },
      "", "number");
}

CLI::Validator not_empty() {
  return CLI::Validator([](std::string& text) -> std::string { return text.empty() ? "an empty value" : ""; }, "", "not empty");
}

void add_model_options(CLI::App& cmd, ModelOptions& o) {
  const CLI::Validator size = whole_number(1, std::numeric_limits<int64_t>::max());
  cmd.add_option("--batch", o.batch, "batch size B")->capture_default_str()->check(size);
  cmd.add_option("--tq", o.tq, "query length Tq")->capture_default_str()->check(size);
  cmd.add_option("--tk", o.tk, "key/value length Tk (cross-attention when it differs from Tq)")->check(size);
  cmd.add_option("--d-model", o.d_model, "model width d_model")->capture_default_str()->check(size);
  cmd.add_option("--heads", o.heads, "number of heads h (d_k = d_model / h)")->capture_default_str()->check(size);
  cmd.add_option("--kv-heads", o.kv_heads, "key/value heads g, dividing h (GQA; 1 = MQA; default h)")->check(size);
  cmd.add_flag("--kv-repeat-copy", o.kv_repeat_copy, "g < h: copy K/V per query head (repeat_interleave) instead of the stride-0 view");
  cmd.add_option("--seed", o.seed, "seed for weights, inputs and dropout")->capture_default_str()->check(seed_number());
  cmd.add_flag("--no-bias", o.no_bias, "projections without bias");
  cmd.add_option("--input", o.input, "X.npy (B,T,d): self-attention input")->check(not_empty());
  cmd.add_option("--query", o.query, "Q.npy (B,Tq,d): cross-attention query")->check(not_empty());
  cmd.add_option("--key", o.key, "K.npy (B,Tk,d)")->check(not_empty());
  cmd.add_option("--value", o.value, "V.npy (B,Tk,d)")->check(not_empty());
  cmd.add_option("--weights", o.weights, "folder with W_Q.weight.npy, W_Q.bias.npy, ... (torch.nn.Linear layout)")->check(not_empty());
  cmd.add_option("--mask", o.mask, "mask spec, e.g. causal,key-padding=5:3,side=left (see below)");
  cmd.add_option("--mask-file", o.mask_file, "M.npy, bool, true = hidden, broadcastable to (B,h,Tq,Tk)")->check(not_empty());
  cmd.add_option("--mask-bug", o.mask_bug, "teach a mask bug: inverted, two-fills, additive, finite-fill")->check(not_empty());
  cmd.add_option("--bug", o.bug, "teach any bug: no-scale, softmax-wrong-axis, softmax-no-max-fp16, view-without-contiguous, mask-*")->check(not_empty());
  cmd.add_option("--dropout", o.dropout, "dropout probability (applies with --train)");
  cmd.add_flag("--train", o.train, "train mode: dropout on");
  cmd.add_flag("--wo-identity", o.wo_identity, "replace W_O by the identity");
  cmd.add_option("--mem-limit", o.mem_limit, "refuse configs whose trace needs more (e.g. 8G; default 75% of RAM)")
      ->check(mem_limit_size());
  cmd.add_option("--backend", o.backend, "cpu or cuda")->capture_default_str();
  cmd.footer(kMaskSpecHelp);
}

int64_t parse_size(const std::string& text) {
  const std::string bad = "'" + text + "' is not a size (want e.g. 512M, 8G or a byte count)";
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (...) {
    throw Error(bad);
  }
  const std::string unit = text.substr(used);
  double mult = 0;
  if (unit.empty() || unit == "B") mult = 1;
  else if (unit == "K" || unit == "KiB") mult = 1024.0;
  else if (unit == "M" || unit == "MiB") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB") mult = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TiB") mult = 1024.0 * 1024 * 1024 * 1024;
  if (mult == 0 || !std::isfinite(v)) throw Error(bad);
  const double bytes = v * mult;
  // Refused, not clamped: 2^62 bytes (4 EiB) is far beyond any machine; under 1 byte is nothing.
  if (!(bytes >= 1.0) || bytes > 0x1p62)
    throw Error("'" + text + "' is out of range (1 byte to 4 EiB)");
  return static_cast<int64_t>(bytes);
}

// The shape of an input file, from its header: nothing is read before the prediction.
static Dims input_shape(const std::string& path, const char* what) {
  const NpyInfo info = read_npy_info(path);
  if (info.dtype != DType::F32 || info.shape.size() != 3)
    throw Error(path + ": " + what + " must be float32 (B,T,d), got " + dtype_name(info.dtype) + " " +
                format_dims(info.shape));
  return info.shape;
}

Model build_model(const ModelOptions& o, const CorePrediction& core_bytes, const std::string& hint) {
  Model m;
  MhaConfig& c = m.config;
  c.batch = o.batch;
  c.tq = o.tq;
  c.tk = o.tk ? o.tk : o.tq;  // --tk 0 is refused by its validator: 0 here means not given
  c.d_model = o.d_model;
  c.heads = o.heads;
  c.kv_heads = o.kv_heads;
  c.kv_repeat_copy = o.kv_repeat_copy;
  c.seed = o.seed;
  c.bias = !o.no_bias;
  c.dropout = o.dropout;
  c.train = o.train;
  c.wo_identity = o.wo_identity;
  c.mask = parse_mask_spec(o.mask);
  if (!o.mask_bug.empty() && !o.bug.empty()) throw Error("give --mask-bug or --bug, not both");
  if (!o.mask_bug.empty()) {
    c.bug = parse_bug("mask-" + o.mask_bug);
  } else if (!o.bug.empty()) {
    c.bug = parse_bug(o.bug);
  }
  if (!o.mem_limit.empty()) c.mem_limit = parse_size(o.mem_limit);

  // [1] sizes: from the options or from the input files' headers (no data read yet)
  const bool cross_files = !o.query.empty() || !o.key.empty() || !o.value.empty();
  if (!o.input.empty() && cross_files) throw Error("give --input (self-attention) or --query/--key/--value, not both");
  if (!o.input.empty()) {
    const Dims x = input_shape(o.input, "--input");  // (B,T,d)
    c.batch = x[0];
    c.tq = c.tk = x[1];
    c.d_model = x[2];
  } else if (cross_files) {
    if (o.query.empty() || o.key.empty() || o.value.empty())
      throw Error("cross-attention needs all three of --query, --key and --value");
    const Dims q = input_shape(o.query, "--query"), k = input_shape(o.key, "--key");
    input_shape(o.value, "--value");
    c.self_attention = false;
    c.batch = q[0];
    c.tq = q[1];
    c.tk = k[1];
    c.d_model = q[2];
  } else {
    c.self_attention = c.tq == c.tk;
  }
  validate(c);

  // [2] memory: inputs + mask file + weights + what the command itself will hold, all checked,
  // before the first allocation
  Size mask_bytes = 0;
  if (!o.mask_file.empty()) {
    const NpyInfo mask = read_npy_info(o.mask_file);
    mask_bytes = numel_of(mask.shape);
  }
  int64_t inputs = 0, weights = 0, core = 0, need = 0;
  try {
    inputs = predict_input_bytes(c);
    weights = predict_weight_bytes(c.d_model, c.bias);
    core = core_bytes(c);
    need = (Size(inputs) + mask_bytes + weights + core).value();
  } catch (const Error& e) {  // a size that wraps: say which configuration
    throw Error("B=" + std::to_string(c.batch) + " Tq=" + std::to_string(c.tq) + " Tk=" + std::to_string(c.tk) +
                " d_model=" + std::to_string(c.d_model) + " h=" + std::to_string(c.heads) +
                " is too large to count its memory: " + e.what());
  }
  const int64_t limit = effective_mem_limit(c);
  if (need > limit)
    throw Error("this command needs " + human_bytes(need) + " (" + format_count(need) + " bytes: inputs " +
                human_bytes(inputs) + ", weights " + human_bytes(weights) + ", trace " + human_bytes(core) +
                "), over the limit of " + human_bytes(limit) +
                (c.mem_limit > 0 ? " (--mem-limit)" : " (75% of physical memory; --mem-limit overrides)") + hint);

  // [3] allocate and read
  if (!o.input.empty()) {
    m.inputs.query = m.inputs.key = m.inputs.value = read_npy(o.input);
  } else if (cross_files) {
    m.inputs.query = read_npy(o.query);
    m.inputs.key = read_npy(o.key);
    m.inputs.value = read_npy(o.value);
  } else {
    m.inputs = random_inputs(c);
  }
  if (!o.mask_file.empty()) m.inputs.mask_file = read_npy(o.mask_file);
  check_inputs(c, m.inputs);
  m.weights = o.weights.empty() ? init_weights(c.d_model, c.bias, c.seed, c.kv_dim())
                                : load_weights(o.weights, c.d_model, c.bias, c.kv_dim());
  return m;
}

}  // namespace attnsim::cli
