#include "cost.h"

#include <cstdio>
#include <map>

#include "checked.h"
#include "error.h"

namespace attnsim {

CostDType parse_cost_dtype(const std::string& name) {
  if (name == "fp32") return CostDType::FP32;
  if (name == "fp16") return CostDType::FP16;
  if (name == "bf16") return CostDType::BF16;
  if (name == "int8") return CostDType::INT8;
  throw Error("unknown dtype '" + name + "' (valid: fp32, fp16, bf16, int8)");
}

const char* cost_dtype_name(CostDType d) {
  switch (d) {
    case CostDType::FP32: return "fp32";
    case CostDType::FP16: return "fp16";
    case CostDType::BF16: return "bf16";
    case CostDType::INT8: return "int8";
  }
  return "?";
}

int64_t cost_dtype_bytes(CostDType d) {
  return d == CostDType::FP32 ? 4 : d == CostDType::INT8 ? 1 : 2;
}

void validate(const CostConfig& c) {
  auto positive = [](const char* what, int64_t v) {
    if (v <= 0) throw Error(std::string(what) + " must be positive, got " + std::to_string(v));
  };
  positive("d-model", c.d_model);
  positive("heads", c.heads);
  positive("layers", c.layers);
  positive("seq", c.seq);
  positive("batch", c.batch);
  if (c.kv_heads < 0) throw Error("kv-heads must not be negative");
  if (c.d_model % c.heads != 0)
    throw Error("d_model " + std::to_string(c.d_model) + " is not divisible by heads " + std::to_string(c.heads));
  if (c.kv_heads > 0 && c.heads % c.kv_heads != 0)
    throw Error("heads " + std::to_string(c.heads) + " is not divisible by kv-heads " +
                std::to_string(c.kv_heads) + ": each key/value head serves a whole group of query heads");
}

Cost compute_cost(const CostConfig& c) {
  validate(c);
  // Exact or refused: each quantity is a checked product that names its factors when it
  // would not fit in 64 bits (never a wrapped number).
  const int64_t d = c.d_model, bytes = cost_dtype_bytes(c.dtype), dk = c.head_dim(), B = c.batch, T = c.seq;
  const int64_t h = c.heads, g = c.effective_kv_heads(), L = c.layers;
  Cost r{};
  r.params_no_bias = checked_product({4, d, d}, "parameters 4·d²");
  r.params_with_bias = checked_add(r.params_no_bias, checked_product({4, d}, "4·d"), "parameters 4·d² + 4·d");
  r.param_bytes = checked_product({r.params_with_bias, bytes}, "parameter bytes");
  r.score_elements = checked_product({B, h, T, T}, "score elements B·h·T²");
  r.score_bytes_layer = checked_product({B, h, T, T, bytes}, "score bytes B·h·T²·bytes");
  r.score_bytes_model = checked_product({B, h, T, T, bytes, L}, "score bytes of all layers");
  r.kv_cache_bytes = checked_product({B, L, 2, h, T, dk, bytes}, "KV cache bytes B·layers·2·h·T·d_k·bytes");
  r.kv_cache_bytes_grouped = checked_product({B, L, 2, g, T, dk, bytes}, "KV cache bytes B·layers·2·g·T·d_k·bytes");
  r.kv_bytes_per_token = checked_product({L, 2, g, dk, bytes}, "KV bytes per token layers·2·g·d_k·bytes");
  r.qk_flops_layer = checked_product({2, B, h, T, T, dk}, "q·kᵀ FLOPs 2·B·h·T²·d_k");
  r.projection_flops_layer = checked_product({8, B, T, d, d}, "projection FLOPs 4·2·B·T·d²");
  return r;
}

PagedWaste paged_waste(const CostConfig& c, const std::vector<int64_t>& lengths, int64_t block, int64_t t_max) {
  const int64_t per_token = compute_cost(c).kv_bytes_per_token;
  if (block <= 0) throw Error("the block size must be positive, got " + std::to_string(block));
  if (t_max <= 0) throw Error("T_max must be positive, got " + std::to_string(t_max));
  PagedWaste w{0, 0, 0, 0};
  for (int64_t len : lengths) {
    if (len <= 0 || len > t_max)
      throw Error("sequence length " + std::to_string(len) + " must be in 1.." + std::to_string(t_max) + " (T_max)");
    const int64_t blocks = len / block + (len % block != 0);  // ceil, without len + block - 1
    w.blocks = checked_add(w.blocks, blocks, "paged blocks");
    w.used_bytes = checked_add(w.used_bytes, checked_mul(len, per_token, "cache bytes"), "cache bytes");
    w.paged_bytes = checked_add(w.paged_bytes, checked_product({blocks, block, per_token}, "paged cache bytes"),
                                "paged cache bytes");
    w.contiguous_bytes = checked_add(w.contiguous_bytes, checked_mul(t_max, per_token, "cache bytes"), "cache bytes");
  }
  return w;
}

std::string format_count(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

std::string human_bytes(int64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return buf;
}

static std::string decimal_bytes(int64_t bytes) {
  static const char* const units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000.0 && u < 5) {
    v /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return buf;
}

std::string format_bytes(int64_t bytes) {
  return format_count(bytes) + " B (" + human_bytes(bytes) + ", " + decimal_bytes(bytes) + ")";
}

static const std::map<std::string, int64_t Cost::*>& quantities() {
  static const std::map<std::string, int64_t Cost::*> q = {
      {"params_no_bias", &Cost::params_no_bias},
      {"params_with_bias", &Cost::params_with_bias},
      {"param_bytes", &Cost::param_bytes},
      {"score_elements", &Cost::score_elements},
      {"score_bytes_layer", &Cost::score_bytes_layer},
      {"score_bytes_model", &Cost::score_bytes_model},
      {"kv_cache_bytes", &Cost::kv_cache_bytes},
      {"kv_cache_bytes_grouped", &Cost::kv_cache_bytes_grouped},
      {"kv_bytes_per_token", &Cost::kv_bytes_per_token},
      {"qk_flops_layer", &Cost::qk_flops_layer},
      {"projection_flops_layer", &Cost::projection_flops_layer},
  };
  return q;
}

double cost_quantity(const Cost& cost, const std::string& name) {
  const auto it = quantities().find(name);
  if (it == quantities().end()) {
    std::string valid;
    for (const auto& [n, _] : quantities()) valid += (valid.empty() ? "" : ", ") + n;
    throw Error("unknown cost quantity '" + name + "' (valid: " + valid + ")");
  }
  return static_cast<double>(cost.*(it->second));
}

const std::vector<std::string>& cost_quantity_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [name, _] : quantities()) n.push_back(name);
    return n;
  }();
  return names;
}

}  // namespace attnsim
