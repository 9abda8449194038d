// attnsim-cli cost: the closed-form cost model (parameters, score tensor, KV cache).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <limits>
#include <sstream>

#include "commands.h"
#include "engine/checked.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "options.h"
#include "table.h"

namespace attnsim::cli {

namespace {

struct CostOptions {
  CostConfig config;
  int64_t head_dim = 0;
  std::string dtype = "fp32";
  std::string sweep;
  int64_t block = -1;   // paged-cache block size; -1 = not asked
  std::string lengths;  // sequence lengths of a batch, for the paged-cache waste
  bool json = false;
};

std::vector<int64_t> parse_lengths(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v <= 0) throw Error("--lengths: '" + item + "' is not a positive length");
    out.push_back(v);
  }
  if (out.empty()) throw Error("--lengths lists no lengths");
  return out;
}

nlohmann::json waste_json(const PagedWaste& w, int64_t block) {
  return {{"block", block}, {"blocks", w.blocks}, {"used_bytes", w.used_bytes},
          {"paged_bytes", w.paged_bytes}, {"contiguous_bytes", w.contiguous_bytes},
          {"paged_waste_bytes", w.paged_bytes - w.used_bytes},
          {"contiguous_waste_bytes", w.contiguous_bytes - w.used_bytes}};
}

void print_waste(const CostConfig& c, const std::vector<int64_t>& lengths, int64_t block, const PagedWaste& w) {
  std::string list;
  for (int64_t l : lengths) list += (list.empty() ? "" : ", ") + std::to_string(l);
  std::printf("\nKV cache for %zu sequences of lengths %s, T_max = %lld (--seq), all layers, %s:\n",
              lengths.size(), list.c_str(), (long long)c.seq, cost_dtype_name(c.dtype));
  auto pct = [&](int64_t waste, int64_t total) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", total ? 100.0 * static_cast<double>(waste) / static_cast<double>(total) : 0.0);
    return std::string(buf);
  };
  Table t({"cache", "allocated", "used", "wasted", "wasted share"});
  t.add({"contiguous, T_max each", format_bytes(w.contiguous_bytes), format_bytes(w.used_bytes),
         format_bytes(w.contiguous_bytes - w.used_bytes), pct(w.contiguous_bytes - w.used_bytes, w.contiguous_bytes)});
  t.add({"paged, " + std::to_string(w.blocks) + " blocks of " + std::to_string(block), format_bytes(w.paged_bytes),
         format_bytes(w.used_bytes), format_bytes(w.paged_bytes - w.used_bytes),
         pct(w.paged_bytes - w.used_bytes, w.paged_bytes)});
  t.print();
}

std::vector<int64_t> parse_sweep(const std::string& text) {
  if (text.rfind("seq=", 0) != 0) throw Error("--sweep '" + text + "' must look like seq=512,2048,8192");
  std::vector<int64_t> seqs;
  std::stringstream in(text.substr(4));
  std::string item;
  while (std::getline(in, item, ',')) {
    const int64_t v = parse_int(item, "--sweep length", 1, std::numeric_limits<int64_t>::max());
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
  t.add({"KV cache per token", "layers·2·g·d_k·" + b, format_bytes(r.kv_bytes_per_token)});
  t.add({"q·kᵀ FLOPs per layer", "2·B·h·T²·d_k", format_count(r.qk_flops_layer)});
  t.add({"projection FLOPs per layer", "4·2·B·T·d²", format_count(r.projection_flops_layer)});
  t.print();
}

}  // namespace

Runner add_cost_command(CLI::App& app) {
  auto o = std::make_shared<CostOptions>();
  CLI::App* cmd = app.add_subcommand("cost", "closed-form parameter, score-tensor and KV-cache sizes");
  const CLI::Validator size = whole_number(1, std::numeric_limits<int64_t>::max());
  cmd->add_option("--d-model", o->config.d_model, "model width")->capture_default_str()->check(size);
  cmd->add_option("--heads", o->config.heads, "query heads h")->capture_default_str()->check(size);
  cmd->add_option("--head-dim", o->head_dim, "d_k; with it, heads = d_model / d_k")->check(size);
  cmd->add_option("--layers", o->config.layers, "layers")->capture_default_str()->check(size);
  cmd->add_option("--seq", o->config.seq, "sequence length T")->capture_default_str()->check(size);
  cmd->add_option("--batch", o->config.batch, "batch size B")->capture_default_str()->check(size);
  cmd->add_option("--dtype", o->dtype, "fp32, fp16, bf16 or int8")->capture_default_str();
  cmd->add_option("--kv-heads", o->config.kv_heads, "key/value heads g (GQA; 1 = MQA)")->check(size);
  cmd->add_option("--sweep", o->sweep, "one row per length: seq=512,2048,8192,32768");
  cmd->add_option("--block", o->block, "paged KV cache: positions per block (with --lengths)");
  cmd->add_option("--lengths", o->lengths, "paged KV cache: lengths of a batch's sequences, e.g. 100,37,512 (T_max = --seq)");
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
    if ((o->block >= 0) != !o->lengths.empty()) throw Error("--block and --lengths go together (the paged-cache waste)");
    if (o->block >= 0 && !o->sweep.empty()) throw Error("--sweep and --block/--lengths do not go together");
    if (o->block >= 0) {
      const std::vector<int64_t> lengths = parse_lengths(o->lengths);
      const PagedWaste w = paged_waste(c, lengths, o->block, c.seq);
      const Cost r = compute_cost(c);
      if (o->json) {
        nlohmann::json j = cost_json(c, r);
        j["paged_cache"] = waste_json(w, o->block);
        j["paged_cache"]["lengths"] = lengths;
        std::printf("%s\n", j.dump(2).c_str());
      } else {
        print_cost(c, r);
        print_waste(c, lengths, o->block, w);
      }
      return 0;
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
