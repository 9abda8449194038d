// attnsim-cli cost: the closed-form cost model (parameters, score tensor, KV cache).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "table.h"

namespace attnsim::cli {

namespace {

struct CostOptions {
  CostConfig config;
  int64_t head_dim = 0;
  std::string dtype = "fp32";
  std::string sweep;
  bool json = false;
};

std::vector<int64_t> parse_sweep(const std::string& text) {
  if (text.rfind("seq=", 0) != 0) throw Error("--sweep '" + text + "' must look like seq=512,2048,8192");
  std::vector<int64_t> seqs;
  std::stringstream in(text.substr(4));
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v <= 0) throw Error("--sweep: '" + item + "' is not a positive length");
    seqs.push_back(v);
  }
  if (seqs.empty()) throw Error("--sweep lists no lengths");
  return seqs;
}

nlohmann::json cost_json(const CostConfig& c, const Cost& r) {
  nlohmann::json j = {{"d_model", c.d_model}, {"heads", c.heads}, {"head_dim", c.head_dim()},
                      {"layers", c.layers},   {"seq", c.seq},     {"batch", c.batch},
                      {"kv_heads", c.effective_kv_heads()}, {"dtype", cost_dtype_name(c.dtype)},
                      {"dtype_bytes", cost_dtype_bytes(c.dtype)}};
  for (const std::string& name : cost_quantity_names()) j[name] = static_cast<int64_t>(cost_quantity(r, name));
  return j;
}

void print_cost(const CostConfig& c, const Cost& r) {
  std::printf("d_model=%lld heads=%lld d_k=%lld layers=%lld seq=%lld batch=%lld dtype=%s (%lld bytes) kv-heads=%lld\n\n",
              (long long)c.d_model, (long long)c.heads, (long long)c.head_dim(), (long long)c.layers,
              (long long)c.seq, (long long)c.batch, cost_dtype_name(c.dtype),
              (long long)cost_dtype_bytes(c.dtype), (long long)c.effective_kv_heads());
  const std::string b = std::to_string(cost_dtype_bytes(c.dtype));
  Table t({"quantity", "formula", "value"});
  t.add({"parameters, no bias", "4·d²", format_count(r.params_no_bias)});
  t.add({"parameters, with bias", "4·d² + 4·d", format_count(r.params_with_bias)});
  t.add({"parameter bytes", "(4·d² + 4·d)·" + b, format_bytes(r.param_bytes)});
  t.add({"score elements per layer", "B·h·T²", format_count(r.score_elements)});
  t.add({"score tensor per layer", "B·h·T²·" + b, format_bytes(r.score_bytes_layer)});
  t.add({"score tensor, all layers", "layers·B·h·T²·" + b, format_bytes(r.score_bytes_model)});
  t.add({"KV cache (h heads)", "B·layers·2·h·T·d_k·" + b, format_bytes(r.kv_cache_bytes)});
  t.add({"KV cache (" + std::to_string(c.effective_kv_heads()) + " kv heads)", "B·layers·2·g·T·d_k·" + b,
         format_bytes(r.kv_cache_bytes_grouped)});
  t.add({"q·kᵀ FLOPs per layer", "2·B·h·T²·d_k", format_count(r.qk_flops_layer)});
  t.add({"projection FLOPs per layer", "4·2·B·T·d²", format_count(r.projection_flops_layer)});
  t.print();
}

}  // namespace

Runner add_cost_command(CLI::App& app) {
  auto o = std::make_shared<CostOptions>();
  CLI::App* cmd = app.add_subcommand("cost", "closed-form parameter, score-tensor and KV-cache sizes");
  cmd->add_option("--d-model", o->config.d_model, "model width")->capture_default_str();
  cmd->add_option("--heads", o->config.heads, "query heads h")->capture_default_str();
  cmd->add_option("--head-dim", o->head_dim, "d_k; with it, heads = d_model / d_k");
  cmd->add_option("--layers", o->config.layers, "layers")->capture_default_str();
  cmd->add_option("--seq", o->config.seq, "sequence length T")->capture_default_str();
  cmd->add_option("--batch", o->config.batch, "batch size B")->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "fp32, fp16, bf16 or int8")->capture_default_str();
  cmd->add_option("--kv-heads", o->config.kv_heads, "key/value heads g (GQA; 1 = MQA)");
  cmd->add_option("--sweep", o->sweep, "one row per length: seq=512,2048,8192,32768");
  cmd->add_flag("--json", o->json, "print JSON");
  return [o, cmd] {
    CostConfig c = o->config;
    c.dtype = parse_cost_dtype(o->dtype);
    if (o->head_dim) {
      if (o->head_dim < 0 || c.d_model % o->head_dim != 0)
        throw Error("d_model " + std::to_string(c.d_model) + " is not divisible by head-dim " + std::to_string(o->head_dim));
      if (cmd->count("--heads") && c.heads != c.d_model / o->head_dim)
        throw Error("--heads " + std::to_string(c.heads) + " disagrees with d_model / head-dim = " +
                    std::to_string(c.d_model / o->head_dim) + "; give one of them");
      c.heads = c.d_model / o->head_dim;
    }
    std::vector<int64_t> seqs = o->sweep.empty() ? std::vector<int64_t>{c.seq} : parse_sweep(o->sweep);
    nlohmann::json rows = nlohmann::json::array();
    Table sweep({"seq", "score/layer", "score/all layers", "KV cache (h)", "KV cache (g)"});
    for (int64_t seq : seqs) {
      c.seq = seq;
      const Cost r = compute_cost(c);
      rows.push_back(cost_json(c, r));
      if (o->json) continue;
      if (o->sweep.empty()) print_cost(c, r);
      else
        sweep.add({format_count(seq), format_bytes(r.score_bytes_layer), format_bytes(r.score_bytes_model),
                   format_bytes(r.kv_cache_bytes), format_bytes(r.kv_cache_bytes_grouped)});
    }
    if (o->json) {
      std::printf("%s\n", (o->sweep.empty() ? rows[0] : rows).dump(2).c_str());
    } else if (!o->sweep.empty()) {
      const Cost r = compute_cost(c);
      std::printf("d_model=%lld heads=%lld d_k=%lld layers=%lld batch=%lld dtype=%s kv-heads=%lld; parameters %s (no bias), %s (bias)\n\n",
                  (long long)c.d_model, (long long)c.heads, (long long)c.head_dim(), (long long)c.layers,
                  (long long)c.batch, cost_dtype_name(c.dtype), (long long)c.effective_kv_heads(),
                  format_count(r.params_no_bias).c_str(), format_count(r.params_with_bias).c_str());
      sweep.print();
    }
    return 0;
  };
}

}  // namespace attnsim::cli
