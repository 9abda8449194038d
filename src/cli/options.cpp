#include "options.h"

#include <unistd.h>

#include <filesystem>

#include "engine/error.h"
#include "engine/npy.h"

namespace attnsim::cli {

namespace fs = std::filesystem;

void add_model_options(CLI::App& cmd, ModelOptions& o) {
  cmd.add_option("--batch", o.batch, "batch size B")->capture_default_str();
  cmd.add_option("--tq", o.tq, "query length Tq")->capture_default_str();
  cmd.add_option("--tk", o.tk, "key/value length Tk (cross-attention when it differs from Tq)");
  cmd.add_option("--d-model", o.d_model, "model width d_model")->capture_default_str();
  cmd.add_option("--heads", o.heads, "number of heads h (d_k = d_model / h)")->capture_default_str();
  cmd.add_option("--kv-heads", o.kv_heads, "key/value heads g, dividing h (GQA; 1 = MQA; default h)");
  cmd.add_flag("--kv-repeat-copy", o.kv_repeat_copy, "g < h: copy K/V per query head (repeat_interleave) instead of the stride-0 view");
  cmd.add_option("--seed", o.seed, "seed for weights, inputs and dropout")->capture_default_str();
  cmd.add_flag("--no-bias", o.no_bias, "projections without bias");
  cmd.add_option("--input", o.input, "X.npy (B,T,d): self-attention input");
  cmd.add_option("--query", o.query, "Q.npy (B,Tq,d): cross-attention query");
  cmd.add_option("--key", o.key, "K.npy (B,Tk,d)");
  cmd.add_option("--value", o.value, "V.npy (B,Tk,d)");
  cmd.add_option("--weights", o.weights, "folder with W_Q.weight.npy, W_Q.bias.npy, ... (torch.nn.Linear layout)");
  cmd.add_option("--mask", o.mask, "mask spec, e.g. causal,key-padding=5:3,side=left (see below)");
  cmd.add_option("--mask-file", o.mask_file, "M.npy, bool, true = hidden, broadcastable to (B,h,Tq,Tk)");
  cmd.add_option("--mask-bug", o.mask_bug, "teach a mask bug: inverted, two-fills, additive, finite-fill");
  cmd.add_option("--bug", o.bug, "teach any bug: no-scale, softmax-wrong-axis, softmax-no-max-fp16, view-without-contiguous, mask-*");
  cmd.add_option("--dropout", o.dropout, "dropout probability (applies with --train)");
  cmd.add_flag("--train", o.train, "train mode: dropout on");
  cmd.add_flag("--wo-identity", o.wo_identity, "replace W_O by the identity");
  cmd.add_option("--mem-limit", o.mem_limit, "refuse configs whose trace needs more (e.g. 8G; default 75% of RAM)");
  cmd.add_option("--backend", o.backend, "cpu or cuda")->capture_default_str();
  cmd.footer(kMaskSpecHelp);
}

int64_t parse_size(const std::string& text) {
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (...) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  double mult = 0;
  if (unit.empty() || unit == "B") mult = 1;
  else if (unit == "K" || unit == "KiB") mult = 1024.0;
  else if (unit == "M" || unit == "MiB") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB") mult = 1024.0 * 1024 * 1024;
  if (used == 0 || v <= 0 || mult == 0)
    throw Error("--mem-limit '" + text + "' is not a size (want e.g. 512M, 8G or a byte count)");
  return static_cast<int64_t>(v * mult);
}

static Tensor read_input(const std::string& path, const char* what) {
  Tensor t = read_npy(path);
  if (t.dtype() != DType::F32 || t.dim() != 3)
    throw Error(path + ": " + what + " must be float32 (B,T,d), got " + dtype_name(t.dtype()) + " " +
                format_dims(t.shape()));
  return t;
}

Model build_model(const ModelOptions& o) {
  Model m;
  MhaConfig& c = m.config;
  c.batch = o.batch;
  c.tq = o.tq;
  c.tk = o.tk ? o.tk : o.tq;
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

  const bool cross_files = !o.query.empty() || !o.key.empty() || !o.value.empty();
  if (!o.input.empty() && cross_files) throw Error("give --input (self-attention) or --query/--key/--value, not both");
  if (!o.input.empty()) {
    m.inputs.query = m.inputs.key = m.inputs.value = read_input(o.input, "--input");
    c.batch = m.inputs.query.size(0);
    c.tq = c.tk = m.inputs.query.size(1);
    c.d_model = m.inputs.query.size(2);
  } else if (cross_files) {
    if (o.query.empty() || o.key.empty() || o.value.empty())
      throw Error("cross-attention needs all three of --query, --key and --value");
    m.inputs.query = read_input(o.query, "--query");
    m.inputs.key = read_input(o.key, "--key");
    m.inputs.value = read_input(o.value, "--value");
    c.self_attention = false;
    c.batch = m.inputs.query.size(0);
    c.tq = m.inputs.query.size(1);
    c.tk = m.inputs.key.size(1);
    c.d_model = m.inputs.query.size(2);
  } else {
    c.self_attention = c.tq == c.tk;
  }
  validate(c);
  if (!m.inputs.query.defined()) m.inputs = random_inputs(c);
  if (!o.mask_file.empty()) m.inputs.mask_file = read_npy(o.mask_file);
  check_inputs(c, m.inputs);
  m.weights = o.weights.empty() ? init_weights(c.d_model, c.bias, c.seed, c.kv_dim())
                                : load_weights(o.weights, c.d_model, c.bias, c.kv_dim());
  return m;
}

void write_folder_atomically(const std::string& dir, const std::function<void(const std::string&)>& fill) {
  const fs::path target(dir);
  if (fs::exists(target) && !(fs::is_directory(target) && fs::is_empty(target)))
    throw Error(dir + " already exists and is not an empty folder; choose a new folder");
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) throw Error(dir + ": the parent folder " + parent.string() + " does not exist");
  const fs::path tmp = parent / ("." + target.filename().string() + ".tmp" + std::to_string(getpid()));
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec)) throw Error(dir + ": cannot create a folder here (" + ec.message() + ")");
  try {
    fill(tmp.string());
    if (fs::exists(target)) fs::remove(target);
    fs::rename(tmp, target);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw Error(dir + ": " + e.code().message());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace attnsim::cli
