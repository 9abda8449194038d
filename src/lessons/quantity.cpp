// Engine quantities for lessons. See quantity.h for the vocabulary.
//
// Index
//   [SECTION] Names
//   [SECTION] Runs (cached forward passes) and trace.* run.* alpha.* ablate.*
//   [SECTION] cost.* flash.* flashrun.*
//   [SECTION] Evaluator (diff.* pair.* reshape_copy.* bmm_copy.* and the dispatch)
//   [SECTION] Conditions
#include "lessons/quantity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "engine/cost.h"
#include "engine/decode_stack.h"
#include "engine/error.h"
#include "engine/flash.h"
#include "engine/mask.h"
#include "engine/mha.h"
#include "engine/scenario.h"
#include "engine/trace.h"
#include "lessons/model_quantity.h"
#include "model/experiments/decode.h"

namespace attnsim::lessons {

// [SECTION] Names ----------------------------------------------------------------------------

namespace {

const std::vector<std::string> kTraceFields = {
    "shape", "strides", "numel", "dim0", "dim1", "dim2", "dim3", "dim4", "stride0", "stride1",
    "stride2", "stride3", "stride4", "offset", "new_bytes", "copied_bytes", "nan_count",
    "neginf_count", "is_view", "is_copy", "skipped", "contiguous", "storage_id"};
const std::vector<std::string> kRunFields = {"held_bytes", "nan_steps", "first_nan_step",
                                             "failed", "error"};
const std::vector<std::string> kAlphaFields = {
    "hidden_max", "hidden_nonzero", "row_sum_max_dev", "col_sum_max_dev", "nan_rows",
    "hidden_rows", "max_weight_mean", "entropy_mean", "diag_share", "prev_share", "first_share",
    "row_count", "dropped_row_sum_max_dev", "dropped_zeroed", "entropy_uniform"};
const std::vector<std::string> kAblateFields = {"out_change", "outside_slice", "inside_slice"};
const std::vector<std::string> kFlashFields = {
    "batch", "heads", "tq", "tk", "head_dim", "block_q", "block_k", "standard_reads", "standard_writes", "standard_traffic", "tiled_reads", "tiled_writes",
    "tiled_traffic", "traffic_ratio", "score_bytes", "fast_bytes"};
const std::vector<std::string> kDecodeFields = {
    "storage_bytes", "formula_bytes", "bytes_per_token", "used_bytes", "append_bytes", "cache_new_bytes",
    "same_storage", "slots", "tokens", "filled", "grouped_stride", "max_diff_full", "kv_heads", "heads",
    "layers", "head_dim", "t_max", "sink", "window", "loss_from", "loss_full", "loss_policy", "loss_window", "bos_weight",
    "copy_targets", "copy_full", "copy_policy", "copy_window", "other_loss_full", "other_loss_policy",
    "other_loss_window"};
const std::vector<std::string> kConfigFields = {"batch", "tq", "tk", "d_model", "heads",
                                                "head_dim", "seed", "dropout", "last_query",
                                                "input_scale", "key_length_last", "key_pads_last",
                                                "query_pads_last"};
const std::vector<std::string> kFlashRunFields = {"max_abs_diff", "tolerance", "within_tolerance",
                                                  "nan_mismatches", "tiles_skipped", "tiles_total"};

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::vector<std::string> split_dots(const std::string& q) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t dot = q.find('.', start);
    parts.push_back(q.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::vector<std::string> cost_names() {
  std::vector<std::string> n = cost_quantity_names();
  for (const char* echo : {"head_dim", "heads", "kv_heads", "d_model", "layers", "seq", "batch", "dtype_bytes",
                           "qk_madds_layer"})
    n.push_back(echo);
  return n;
}

}  // namespace

bool is_known_quantity(const std::string& q, std::string* why) {
  const auto p = split_dots(q);
  auto fail = [&](const std::string& msg) {
    if (why) *why = msg;
    return false;
  };
  const std::string kinds = "config, cost, trace, run, alpha, diff, pair, reshape_copy, bmm_copy, ablate, flash, flashrun, decode, model";
  if (p.size() < 2) return fail("unknown quantity '" + q + "' (it starts with one of: " + kinds + ")");
  const std::string& kind = p[0];
  auto field = [&](const std::vector<std::string>& fields) {
    if (p.size() != 2) return fail("quantity '" + q + "' has too many parts");
    if (!contains(fields, p[1]))
      return fail("unknown quantity '" + q + "' (" + kind + ".* fields: " + join(fields) + ")");
    return true;
  };
  auto step = [&](const std::string& s) {
    if (is_step_name(s)) return true;
    std::vector<std::string> names(kStepNames.begin(), kStepNames.end());
    return fail("unknown trace step '" + s + "' in quantity '" + q + "' (known: " + join(names) + ")");
  };
  if (kind == "config") return field(kConfigFields);
  if (kind == "cost") return field(cost_names());
  if (kind == "run") return field(kRunFields);
  if (kind == "alpha") return field(kAlphaFields);
  if (kind == "ablate") return field(kAblateFields);
  if (kind == "flash") return field(kFlashFields);
  if (kind == "flashrun") return field(kFlashRunFields);
  if (kind == "decode") return field(kDecodeFields);
  if (kind == "model") return field(kModelFields);
  if (kind == "diff" || kind == "pair" || kind == "reshape_copy" || kind == "bmm_copy") {
    if (p.size() != 2) return fail("quantity '" + q + "' is " + kind + ".<step>");
    return step(p[1]);
  }
  if (kind == "trace") {
    if (p.size() != 3) return fail("quantity '" + q + "' is trace.<step>.<field>");
    if (!step(p[1])) return false;
    if (!contains(kTraceFields, p[2]))
      return fail("unknown quantity '" + q + "' (trace.<step>.* fields: " + join(kTraceFields) + ")");
    return true;
  }
  return fail("unknown quantity '" + q + "' (it starts with one of: " + kinds + ")");
}

bool quantity_uses_cost(const std::string& q) { return q.rfind("cost.", 0) == 0; }
bool quantity_uses_flash(const std::string& q) { return q.rfind("flash.", 0) == 0; }
bool quantity_uses_against(const std::string& q) { return q.rfind("diff.", 0) == 0; }

std::string format_value(const Value& v) {
  if (const double* d = std::get_if<double>(&v)) {
    char buf[64];
    if (std::isfinite(*d) && std::fabs(*d) < 9e15 && *d == std::floor(*d))
      std::snprintf(buf, sizeof buf, "%.0f", *d);
    else
      std::snprintf(buf, sizeof buf, "%.9g", *d);
    return buf;
  }
  if (const auto* l = std::get_if<std::vector<int64_t>>(&v)) {
    std::string s = "[";
    for (size_t i = 0; i < l->size(); ++i) s += (i ? ", " : "") + std::to_string((*l)[i]);
    return s + "]";
  }
  return "\"" + std::get<std::string>(v) + "\"";
}

// [SECTION] Runs (cached forward passes) and trace.* run.* alpha.* ablate.* -----------------

namespace {

struct Run {
  Resolved resolved;
  MhaWeights weights;
  ForwardResult result;
};

std::string key_of(const Resolved& r) {
  const MhaConfig& c = r.config;
  std::string k = r.preset + "|" + std::to_string(c.batch) + "," + std::to_string(c.tq) + "," +
                  std::to_string(c.tk) + "," + std::to_string(c.d_model) + "," +
                  std::to_string(c.heads) + "," + std::to_string(c.seed) + "," +
                  std::to_string(c.self_attention) + std::to_string(c.bias) +
                  std::to_string(c.train) + std::to_string(c.wo_identity) + "," +
                  std::to_string(c.dropout) + "," + format_mask_spec(c.mask) + "," +
                  bug_name(c.bug) + "," + std::to_string(r.input_scale) + "|";
  for (const auto& s : r.sentences) k += s + "\x1f";
  k += "|";
  for (const auto& s : r.key_sentences) k += s + "\x1f";
  return k + "|" + r.policy;
}

// The bool mask the settings mean (the intended one, whatever bug is on): (B,1,Tq,Tk).
Tensor intended_mask(const MhaConfig& c) { return build_mask(c.mask, c.batch, c.tq, c.tk); }

bool hidden_at(const Tensor& mask, int64_t b, int64_t i, int64_t j) {
  return mask.defined() && mask.at({b, 0, i, j}) != 0.0f;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) throw Error("a step to compare did not run");
  if (a.shape() != b.shape())
    throw Error("cannot compare shapes " + format_dims(a.shape()) + " and " + format_dims(b.shape()));
  const auto va = a.to_vector(), vb = b.to_vector();
  double worst = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    const bool na = std::isnan(va[i]), nb = std::isnan(vb[i]);
    if (na || nb) {
      if (na != nb) return INFINITY;
      continue;
    }
    if (std::isinf(va[i]) || std::isinf(vb[i])) {
      if (va[i] != vb[i]) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::fabs(static_cast<double>(va[i]) - vb[i]));
  }
  return worst;
}

const Step& step_of(const Run& run, const std::string& name) {
  const Step* s = run.result.trace.find(name);
  if (!s) throw Error("step '" + name + "' did not run" +
                      (run.result.error.empty() ? "" : " (the pass stopped: " + run.result.error + ")"));
  return *s;
}

Value trace_field(const Run& run, const std::string& step_name, const std::string& f) {
  const Step& s = step_of(run, step_name);
  if (f == "skipped") return s.skipped() ? 1.0 : 0.0;
  if (f == "is_view") return s.is_view() ? 1.0 : 0.0;
  if (f == "is_copy") return s.kind == StepKind::Copy ? 1.0 : 0.0;
  if (f == "new_bytes") return static_cast<double>(s.new_bytes);
  if (f == "copied_bytes") return static_cast<double>(s.copied_bytes);
  if (f == "nan_count") return static_cast<double>(s.nan_count);
  if (f == "neginf_count") return static_cast<double>(s.neginf_count);
  if (f == "storage_id") return static_cast<double>(s.storage_id);
  if (s.skipped() || !s.out.defined()) throw Error("step '" + step_name + "' was skipped: " + s.note);
  if (f == "shape") return std::vector<int64_t>(s.out.shape().begin(), s.out.shape().end());
  if (f == "strides") return std::vector<int64_t>(s.out.strides().begin(), s.out.strides().end());
  if (f == "numel") return static_cast<double>(s.out.numel());
  if (f == "offset") return static_cast<double>(s.out.offset());
  if (f == "contiguous") return s.out.is_contiguous() ? 1.0 : 0.0;
  if (f.rfind("dim", 0) == 0 || f.rfind("stride", 0) == 0) {
    const bool dim = f.rfind("dim", 0) == 0;
    const int64_t i = f.back() - '0';
    if (i >= s.out.dim())
      throw Error("step '" + step_name + "' has " + std::to_string(s.out.dim()) + " dimensions, no " + f);
    return static_cast<double>(dim ? s.out.shape()[static_cast<size_t>(i)]
                                   : s.out.strides()[static_cast<size_t>(i)]);
  }
  throw Error("unknown trace field '" + f + "'");
}

Value run_field(const Run& run, const std::string& f) {
  const Trace& t = run.result.trace;
  if (f == "held_bytes") return static_cast<double>(t.held_bytes());
  if (f == "first_nan_step") return t.first_nan_step();
  if (f == "failed") return run.result.error.empty() ? 0.0 : 1.0;
  if (f == "error") return run.result.error;
  if (f == "nan_steps") {
    double n = 0;
    for (const auto& s : t.steps) n += s.nan_count > 0 ? 1 : 0;
    return n;
  }
  throw Error("unknown run field '" + f + "'");
}

Value alpha_field(const Run& run, const std::string& f, int64_t only_head) {
  const Step& s = step_of(run, "alpha");
  if (s.skipped()) throw Error("alpha was skipped");
  const Tensor& a = s.out;  // (B,h,Tq,Tk)
  const MhaConfig& c = run.resolved.config;
  const Tensor mask = intended_mask(c);
  const int64_t B = a.size(0), H = a.size(1), Tq = a.size(2), Tk = a.size(3);
  const auto v = a.to_vector();
  auto at = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    return v[static_cast<size_t>(((b * H + h) * Tq + i) * Tk + j)];
  };
  double hidden_max = 0, hidden_nonzero = 0, row_dev = 0, col_dev = 0, nan_rows = 0,
         hidden_rows = 0, max_sum = 0, ent_sum = 0, rows = 0, diag = 0, prev = 0, first = 0,
         uniform_sum = 0;
  if (only_head >= H)
    throw Error("head " + std::to_string(only_head) + " does not exist (heads = " + std::to_string(H) + ")");
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      if (only_head >= 0 && h != only_head) continue;
      for (int64_t i = 0; i < Tq; ++i) {
        bool has_nan = false, all_hidden = true;
        double sum = 0, mx = 0, ent = 0, visible = 0;
        for (int64_t j = 0; j < Tk; ++j) {
          const float w = at(b, h, i, j);
          const bool hid = hidden_at(mask, b, i, j);
          visible += hid ? 0 : 1;
          all_hidden = all_hidden && hid;
          if (std::isnan(w)) {
            has_nan = true;
            continue;
          }
          sum += w;
          mx = std::max(mx, static_cast<double>(w));
          if (w > 0) ent -= w * std::log(static_cast<double>(w));
          if (hid && w != 0.0f) ++hidden_nonzero;
          if (hid) hidden_max = std::max(hidden_max, static_cast<double>(std::fabs(w)));
        }
        if (all_hidden && mask.defined()) ++hidden_rows;
        if (has_nan) {
          ++nan_rows;
          continue;
        }
        row_dev = std::max(row_dev, std::fabs(sum - 1.0));
        if (i < Tk) diag += at(b, h, i, i);
        if (i >= 1 && i - 1 < Tk) prev += at(b, h, i, i - 1);
        first += at(b, h, i, 0);
        max_sum += mx;
        ent_sum += ent;
        uniform_sum += visible > 0 ? std::log(visible) : 0.0;
        ++rows;
      }
      for (int64_t j = 0; j < Tk; ++j) {
        double sum = 0;
        bool has_nan = false;
        for (int64_t i = 0; i < Tq; ++i) {
          const float w = at(b, h, i, j);
          if (std::isnan(w)) has_nan = true;
          else sum += w;
        }
        if (!has_nan) col_dev = std::max(col_dev, std::fabs(sum - 1.0));
      }
    }
  if (f == "row_count") return static_cast<double>(B * H * Tq);
  if (f == "dropped_row_sum_max_dev" || f == "dropped_zeroed") {
    // alpha_dropped (train mode): kept weights scaled by 1/(1-p), dropped ones 0.
    const Step& ds = step_of(run, "alpha_dropped");
    if (ds.skipped() || !ds.out.defined()) throw Error("alpha_dropped was skipped (train = false or dropout = 0)");
    const auto dv = ds.out.to_vector();
    double dev = 0, zeroed = 0;
    for (int64_t r = 0; r < B * H * Tq; ++r) {
      double sum = 0;
      bool has_nan = false;
      for (int64_t j = 0; j < Tk; ++j) {
        const size_t k = static_cast<size_t>(r * Tk + j);
        if (std::isnan(dv[k])) has_nan = true;
        else sum += dv[k];
        if (v[k] != 0.0f && dv[k] == 0.0f) ++zeroed;
      }
      if (!has_nan) dev = std::max(dev, std::fabs(sum - 1.0));
    }
    return f == "dropped_zeroed" ? zeroed : dev;
  }
  if (f == "hidden_max") return hidden_max;
  if (f == "hidden_nonzero") return hidden_nonzero;
  if (f == "row_sum_max_dev") return row_dev;
  if (f == "col_sum_max_dev") return col_dev;
  if (f == "nan_rows") return nan_rows;
  if (f == "hidden_rows") return hidden_rows;
  if (f == "max_weight_mean") return rows ? max_sum / rows : 0.0;
  if (f == "entropy_mean") return rows ? ent_sum / rows : 0.0;
  if (f == "entropy_uniform") return rows ? uniform_sum / rows : 0.0;
  if (f == "diag_share") return rows ? diag / rows : 0.0;
  if (f == "prev_share") return rows ? prev / rows : 0.0;
  if (f == "first_share") return rows ? first / rows : 0.0;
  throw Error("unknown alpha field '" + f + "'");
}

// Head `head`'s slice of ctx_concat zeroed, then W_O applied again (plain loops).
Value ablate_field(const Run& run, int64_t head, const std::string& f) {
  const MhaConfig& c = run.resolved.config;
  if (head < 0) throw Error("ablate.* needs `head`, the head to zero");
  if (head >= c.heads)
    throw Error("head " + std::to_string(head) + " does not exist (heads = " + std::to_string(c.heads) + ")");
  const Tensor& ctx = step_of(run, "ctx_concat").out;  // (B,Tq,d)
  const Tensor& out = step_of(run, "out").out;         // (B,Tq,d)
  const int64_t B = ctx.size(0), T = ctx.size(1), d = ctx.size(2), dk = c.head_dim();
  const auto x = ctx.to_vector(), y = out.to_vector();
  const auto W = c.wo_identity ? std::vector<float>() : run.weights.W_O.weight.to_vector();  // (d,d)
  const bool bias = !c.wo_identity && run.weights.W_O.bias.defined();
  const auto bv = bias ? run.weights.W_O.bias.to_vector() : std::vector<float>();
  double change = 0, outside = 0, inside = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const float* row = &x[static_cast<size_t>((b * T + t) * d)];
      for (int64_t o = 0; o < d; ++o) {
        double acc;
        if (c.wo_identity) {
          acc = (o / dk == head) ? 0.0 : row[o];
        } else {
          acc = bias ? bv[static_cast<size_t>(o)] : 0.0;
          for (int64_t i = 0; i < d; ++i)
            if (i / dk != head) acc += static_cast<double>(W[static_cast<size_t>(o * d + i)]) * row[i];
        }
        const double delta = std::fabs(acc - y[static_cast<size_t>((b * T + t) * d + o)]);
        change = std::max(change, delta);
        if (o / dk == head) inside = std::max(inside, delta);
        else outside = std::max(outside, delta);
      }
    }
  // Float rounding of the re-summed product is not a change: below 1e-5 counts as 0.
  auto clean = [](double v) { return v < 1e-5 ? 0.0 : v; };
  if (f == "out_change") return clean(change);
  if (f == "outside_slice") return clean(outside);
  if (f == "inside_slice") return clean(inside);
  throw Error("unknown ablate field '" + f + "'");
}

// The resolved settings themselves: what the simulator shows (no engine run).
Value config_field(const Resolved& r, const std::string& f) {
  const MhaConfig& c = r.config;
  if (f == "batch") return static_cast<double>(c.batch);
  if (f == "tq") return static_cast<double>(c.tq);
  if (f == "tk") return static_cast<double>(c.tk);
  if (f == "d_model") return static_cast<double>(c.d_model);
  if (f == "heads") return static_cast<double>(c.heads);
  if (f == "head_dim") return static_cast<double>(c.head_dim());
  if (f == "seed") return static_cast<double>(c.seed);
  if (f == "dropout") return static_cast<double>(c.dropout);
  if (f == "last_query") return static_cast<double>(c.tq - 1);
  if (f == "input_scale") return static_cast<double>(r.input_scale);
  // The last batch element's padding (the padded sentence of the mask scenarios).
  const auto& keys = c.mask.key_lengths;
  const auto& queries = c.mask.query_lengths;
  if (f == "key_length_last") return static_cast<double>(keys.empty() ? c.tk : keys.back());
  if (f == "key_pads_last") return static_cast<double>(keys.empty() ? 0 : c.tk - keys.back());
  if (f == "query_pads_last") return static_cast<double>(queries.empty() ? 0 : c.tq - queries.back());
  throw Error("unknown config field '" + f + "'");
}

// [SECTION] cost.* flash.* flashrun.* --------------------------------------------------------

Value cost_field(const CostSettings& s, const std::string& f) {
  const CostConfig c = resolve_cost(s);
  if (f == "head_dim") return static_cast<double>(c.head_dim());
  if (f == "heads") return static_cast<double>(c.heads);
  if (f == "kv_heads") return static_cast<double>(c.effective_kv_heads());
  if (f == "d_model") return static_cast<double>(c.d_model);
  if (f == "layers") return static_cast<double>(c.layers);
  if (f == "seq") return static_cast<double>(c.seq);
  if (f == "batch") return static_cast<double>(c.batch);
  if (f == "dtype_bytes") return static_cast<double>(cost_dtype_bytes(c.dtype));
  // One multiply-add is 2 FLOPs: the count a learner multiplies out (B·T²·d).
  if (f == "qk_madds_layer") return static_cast<double>(compute_cost(c).qk_flops_layer / 2);
  return cost_quantity(compute_cost(c), f);
}

Value flash_field(const FlashSettings& s, const std::string& f) {
  FlashShape shape;
  shape.batch = s.batch.value_or(1);
  shape.heads = s.heads.value_or(1);
  shape.tq = s.tq.value_or(128);
  shape.tk = s.tk.value_or(shape.tq);
  shape.head_dim = s.head_dim.value_or(64);
  const FlashBlocks def = default_flash_blocks(shape.head_dim, 2 << 20);
  shape.block_q = s.block_q.value_or(def.block_q);
  shape.block_k = s.block_k.value_or(def.block_k);
  for (int64_t v : {shape.batch, shape.heads, shape.tq, shape.tk, shape.head_dim, shape.block_q, shape.block_k})
    if (v <= 0) throw Error("flash sizes must be positive");
  const FlashIo st = flash_io_standard(shape), ti = flash_io_tiled_no_skip(shape);
  if (f == "batch") return static_cast<double>(shape.batch);  // the sizes it used
  if (f == "heads") return static_cast<double>(shape.heads);
  if (f == "tq") return static_cast<double>(shape.tq);
  if (f == "tk") return static_cast<double>(shape.tk);
  if (f == "head_dim") return static_cast<double>(shape.head_dim);
  if (f == "block_q") return static_cast<double>(shape.block_q);
  if (f == "block_k") return static_cast<double>(shape.block_k);
  if (f == "standard_reads") return static_cast<double>(st.reads);
  if (f == "standard_writes") return static_cast<double>(st.writes);
  if (f == "standard_traffic") return static_cast<double>(st.reads + st.writes);
  if (f == "tiled_reads") return static_cast<double>(ti.reads);
  if (f == "tiled_writes") return static_cast<double>(ti.writes);
  if (f == "tiled_traffic") return static_cast<double>(ti.reads + ti.writes);
  if (f == "traffic_ratio") return static_cast<double>(st.reads + st.writes) / static_cast<double>(ti.reads + ti.writes);
  if (f == "score_bytes") return static_cast<double>(2 * shape.batch * shape.heads * shape.tq * shape.tk * 4);
  if (f == "fast_bytes") return static_cast<double>(flash_fast_bytes(shape.block_q, shape.block_k, shape.head_dim));
  throw Error("unknown flash field '" + f + "'");
}

}  // namespace

// [SECTION] Evaluator ----------------------------------------------------------------------

struct Evaluator::Cache {
  std::map<std::string, std::shared_ptr<Run>> runs;
  std::map<std::string, std::map<std::string, double>> flashruns;
  std::map<std::string, std::map<std::string, double>> decodes;

  // The scenario's decode (decode_stack.h) under the settings' sizes and cache policy,
  // measured on the real caches: storage bytes, the append, the views, and decode against the
  // full forward. A trained scenario (decode-model, decode-model-sinks) runs the checkpoint the
  // claim's `model` table names (the shipped induction model by default) and adds what
  // eviction costs it (model::eviction_losses) and the weight its heads put on BOS.
  double decode(const Settings& settings, const ModelSettings& ms, const std::string& f) {
    const Resolved r = resolve(settings);
    Scenario sc = find_scenario(r.preset);
    if (!sc.decode.enabled) {
      std::string names;
      for (const Scenario& s : all_scenarios())
        if (s.decode.enabled) names += (names.empty() ? "" : ", ") + s.name;
      throw Error("decode.* needs a decode scenario (" + names + "); '" + r.preset + "' is not one");
    }
    const std::string dir = sc.decode.trained ? model_dir_of(ms) : "";
    const bool per_layer = f == "bos_weight";
    const std::string key = key_of(r) + "|" + dir + (per_layer ? "|" + std::to_string(ms.layer.value_or(-1)) + "." +
                                                                   std::to_string(ms.head.value_or(-1))
                                                               : "");
    auto it = decodes.find(key);
    if (it == decodes.end()) it = decodes.emplace(key, measure_decode(sc, r, dir, ms)).first;
    const auto v = it->second.find(f);
    if (v == it->second.end()) {
      if (!sc.decode.trained)
        throw Error("decode." + f + " reads the trained model's losses and weights: give a trained decode scenario "
                    "(decode-model, decode-model-sinks), not '" + r.preset + "'");
      throw Error("decode." + f + " compares what a cache policy evicts: the policy here (" +
                  (r.policy.empty() ? sc.decode.policy : r.policy) + ") evicts nothing");
    }
    return v->second;
  }

  static std::map<std::string, double> measure_decode(Scenario sc, const Resolved& r, const std::string& dir,
                                                      const ModelSettings& ms) {
    StackConfig cfg;
    std::vector<std::vector<int64_t>> prompts;
    std::optional<StackWeights> weights;
    if (sc.decode.trained) {
      model::ScenarioStack st = model::scenario_stack(loaded_model(dir), sc.decode, r.policy);
      cfg = st.config;
      prompts = std::move(st.prompts);
      weights = std::move(st.weights);
    } else {
      sc.config = r.config;
      cfg = stack_config_for(sc, r.policy);
      prompts = prompts_for(sc);
    }
    Decoder dec = weights ? Decoder(cfg, prompts, *weights) : Decoder(cfg, prompts);
    std::vector<DecodeStep> steps{dec.prefill()};
    // where position 0 (BOS) sits in layer l's cache after each call, -1 once evicted
    std::vector<std::vector<int64_t>> bos_slot(1);
    auto note_bos = [&](std::vector<int64_t>& per_layer) {
      if (dec.paged()) return;
      for (const KvCache& c : dec.caches()) {
        const auto& pos = c.slot_positions();
        const auto at = std::find(pos.begin(), pos.end(), int64_t{0});
        per_layer.push_back(at == pos.end() ? -1 : static_cast<int64_t>(at - pos.begin()));
      }
    };
    note_bos(bos_slot.back());
    int64_t calls = 0;  // tokens of the longest sequence at the end (a trained prompt's BOS counts)
    for (const auto& p : prompts) calls = std::max<int64_t>(calls, static_cast<int64_t>(p.size()) + sc.decode.steps);
    while (dec.length() < calls) {
      steps.push_back(dec.step());
      bos_slot.emplace_back();
      note_bos(bos_slot.back());
    }
    const Trace& first = steps.front().traces[0][0];
    const Trace& last = steps.back().traces[0][0];
    std::map<std::string, double> m;
    CostConfig cc;
    cc.d_model = cfg.attn.d_model, cc.heads = cfg.attn.heads, cc.kv_heads = cfg.attn.kv_group_count();
    cc.layers = cfg.layers;
    cc.batch = dec.paged() ? 1 : dec.sequences();
    cc.seq = dec.paged() ? dec.block_pool().blocks() * cfg.block_size : cfg.policy.slots(cfg.t_max);
    const Cost cost = compute_cost(cc);
    m["storage_bytes"] = static_cast<double>(dec.cache_storage_bytes());
    m["formula_bytes"] = static_cast<double>(cost.kv_cache_bytes_grouped);
    m["bytes_per_token"] = static_cast<double>(cost.kv_bytes_per_token);
    m["used_bytes"] = static_cast<double>(dec.cache_used_bytes());
    m["append_bytes"] = static_cast<double>(last.at("k_cache_append").copied_bytes + last.at("v_cache_append").copied_bytes);
    m["cache_new_bytes"] = static_cast<double>(last.at("k_cache_append").new_bytes + last.at("k_cache").new_bytes);
    m["same_storage"] = last.at("k_cache").out.shares_storage_with(first.at("k_cache").out) ? 1.0 : 0.0;
    m["slots"] = static_cast<double>(cc.seq);
    m["tokens"] = static_cast<double>(dec.tokens(0).size());
    m["filled"] = static_cast<double>(last.at("k_cache").out.size(2));
    const Step* kg = last.find("k_grouped");
    m["grouped_stride"] = kg && !kg->skipped() ? static_cast<double>(kg->out.strides()[2]) : -1.0;
    const Tensor full = dec.full_forward(0);
    double worst = 0;
    int64_t at = 0;
    for (const DecodeStep& st : steps)
      for (int64_t i = 0; i < st.hidden[0].size(0); ++i, ++at)
        for (int64_t e = 0; e < full.size(1); ++e)
          worst = std::max(worst, std::fabs(static_cast<double>(st.hidden[0].at({i, e})) - full.at({at, e})));
    m["max_diff_full"] = worst;
    m["kv_heads"] = static_cast<double>(cc.kv_heads);
    m["heads"] = static_cast<double>(cc.heads);
    // The stack's own sizes and policy, so a text states them bound ("sink=2, window=6").
    m["layers"] = static_cast<double>(cfg.layers);
    m["head_dim"] = static_cast<double>(cfg.attn.head_dim());
    m["t_max"] = static_cast<double>(cfg.t_max);
    m["sink"] = static_cast<double>(cfg.policy.sink);
    m["window"] = static_cast<double>(cfg.policy.window);
    if (!sc.decode.trained || dec.paged() || cfg.policy.kind == PolicyKind::Full) return m;
    // What eviction costs the trained model on the tokens fed (prompt and generated).
    const model::EvictionLosses ev = model::eviction_losses(cfg, *weights, dec.tokens(0));
    m["loss_from"] = static_cast<double>(ev.from);
    m["loss_full"] = ev.mean_full;
    m["loss_policy"] = ev.mean_policy;
    m["loss_window"] = ev.mean_window;
    // copying (model::copyable_targets) against the rest, from loss_from on
    const double copies = static_cast<double>(ev.copy_targets);
    m["copy_targets"] = copies;
    m["copy_full"] = copies > 0 ? static_cast<double>(ev.copy_full) / copies : 0.0;
    m["copy_policy"] = copies > 0 ? static_cast<double>(ev.copy_policy) / copies : 0.0;
    m["copy_window"] = copies > 0 ? static_cast<double>(ev.copy_window) / copies : 0.0;
    m["other_loss_full"] = ev.other_full;
    m["other_loss_policy"] = ev.other_policy;
    m["other_loss_window"] = ev.other_window;
    // BOS's share of attention over the calls that feed positions from the first eviction on:
    // one head's (model table layer, head) or the mean over a layer's heads (the last layer
    // by default); 0 in a call where BOS has been evicted.
    const int64_t layer = ms.layer.value_or(cfg.layers - 1), h = cfg.attn.heads;
    if (layer < 0 || layer >= cfg.layers || (ms.head && (*ms.head < 0 || *ms.head >= h)))
      throw Error("decode.bos_weight: head " + std::to_string(layer) + "." + std::to_string(ms.head.value_or(0)) +
                  " is outside the model (" + std::to_string(cfg.layers) + " layers x " + std::to_string(h) + " heads)");
    double share = 0;
    int64_t rows = 0;
    for (size_t c = 0; c < steps.size(); ++c) {
      const DecodeStep& st = steps[c];
      const Tensor& alpha = st.traces[0][static_cast<size_t>(layer)].at("alpha").out;  // (B,h,n,t')
      const int64_t slot = bos_slot[c][static_cast<size_t>(layer)];
      for (int64_t i = 0; i < alpha.size(2); ++i) {
        if (st.first_position + i < ev.from) continue;
        for (int64_t q = ms.head.value_or(0); q < (ms.head ? *ms.head + 1 : h); ++q)
          share += slot < 0 ? 0.0 : alpha.at({0, q, i, slot});
        rows += ms.head ? 1 : h;
      }
    }
    m["bos_weight"] = rows ? share / static_cast<double>(rows) : 0.0;
    return m;
  }

  std::shared_ptr<Run> run(const Settings& settings) {
    Resolved r = resolve(settings);
    const std::string key = key_of(r);
    if (auto it = runs.find(key); it != runs.end()) return it->second;
    auto run = std::make_shared<Run>();
    run->resolved = r;
    const MhaInputs inputs = scenario_inputs(r.config, r.sentences, r.key_sentences, r.input_scale);
    run->weights = init_weights(r.config.d_model, r.config.bias, r.config.seed, r.config.kv_dim());
    run->result = forward(r.config, run->weights, inputs);
    if (runs.size() > 64) runs.clear();  // lessons are small; keep memory bounded anyway
    runs.emplace(key, run);
    return run;
  }

  double flashrun(const Settings& settings, const FlashSettings& blocks, const std::string& f) {
    Resolved r = resolve(settings);
    const std::string key = key_of(r) + "|" + std::to_string(blocks.block_q.value_or(0)) + "," +
                            std::to_string(blocks.block_k.value_or(0));
    auto it = flashruns.find(key);
    if (it == flashruns.end()) {
      const MhaInputs inputs = scenario_inputs(r.config, r.sentences, r.key_sentences, r.input_scale);
      const MhaWeights w = init_weights(r.config.d_model, r.config.bias, r.config.seed, r.config.kv_dim());
      FlashOptions options;
      options.threads = 1;
      options.block_q = blocks.block_q.value_or(0);
      options.block_k = blocks.block_k.value_or(0);
      const FlashResult fr = flash_forward(r.config, w, inputs, options);
      const FlashComparison cmp = compare_flash_with_standard(r.config, w, inputs, fr);
      std::map<std::string, double> m;
      m["max_abs_diff"] = cmp.out.max_abs_diff;
      m["tolerance"] = cmp.out.tolerance;
      m["within_tolerance"] = cmp.out.ok() && cmp.ctx_heads.ok() ? 1 : 0;
      m["nan_mismatches"] = static_cast<double>(cmp.out.nan_mismatches + cmp.ctx_heads.nan_mismatches);
      m["tiles_skipped"] = static_cast<double>(fr.core.stats.tiles_skipped);
      m["tiles_total"] = static_cast<double>(fr.core.stats.tiles_total);
      it = flashruns.emplace(key, m).first;
    }
    return it->second.at(f);
  }
};

Evaluator::Evaluator() : cache_(std::make_unique<Cache>()) {}
Evaluator::~Evaluator() = default;

Value Evaluator::evaluate(const Claim& claim, const Settings& base) {
  std::string why;
  if (!is_known_quantity(claim.quantity, &why)) throw Error(why);
  const auto p = split_dots(claim.quantity);
  const Settings settings = merge(base, claim.settings);
  const std::string& kind = p[0];
  if (kind == "cost") return cost_field(claim.cost, p[1]);
  if (kind == "flash") return flash_field(claim.flash, p[1]);
  if (kind == "flashrun") return cache_->flashrun(settings, claim.flash, p[1]);
  if (kind == "decode") return cache_->decode(settings, claim.model, p[1]);
  if (kind == "model") return model_field(claim.model, p[1]);
  if (kind == "config") return config_field(resolve(settings), p[1]);
  const auto run = cache_->run(settings);
  if (kind == "trace") return trace_field(*run, p[1], p[2]);
  if (kind == "run") return run_field(*run, p[1]);
  if (kind == "alpha") return alpha_field(*run, p[1], claim.head);
  if (kind == "ablate") return ablate_field(*run, claim.head, p[1]);
  if (kind == "reshape_copy") {
    // reshape merging the last two axes (what ctx_concat needs): bytes it copies, 0 = a view.
    const Tensor& t = step_of(*run, p[1]).out;
    if (!t.defined() || t.dim() < 2) throw Error("step '" + p[1] + "' has no two axes to merge");
    Dims merged(t.shape().begin(), t.shape().end() - 2);
    merged.push_back(t.size(-2) * t.size(-1));
    const Tensor r = t.reshape(merged);  // view if possible, else copies
    return r.shares_storage_with(t) ? 0.0 : static_cast<double>(r.nbytes());
  }
  if (kind == "bmm_copy") {
    // PyTorch's matmul of two 4-D operands folds (B, h) into one batch axis with reshape
    // before its bmm (torch 1.13, aten/src/ATen/native/LinearAlgebra.cpp): bytes that fold
    // copies, 0 = a view. kᵀ is a transposed view of k_heads with the same first two axes,
    // so k_heads answers for it. attnsim's own products read the strides and copy nothing.
    const Tensor& t = step_of(*run, p[1]).out;
    if (!t.defined() || t.dim() < 3) throw Error("step '" + p[1] + "' has no two leading axes to fold");
    Dims folded{t.size(0) * t.size(1)};
    folded.insert(folded.end(), t.shape().begin() + 2, t.shape().end());
    const Tensor r = t.reshape(folded);  // view if possible, else copies
    return r.shares_storage_with(t) ? 0.0 : static_cast<double>(r.nbytes());
  }
  if (kind == "pair") return max_abs_diff(step_of(*run, p[1]).out, step_of(*run, claim.step_b).out);
  if (kind == "diff") {
    const auto other = cache_->run(merge(settings, claim.against));
    return max_abs_diff(step_of(*run, p[1]).out, step_of(*other, p[1]).out);
  }
  throw Error("unknown quantity '" + claim.quantity + "'");
}

// [SECTION] Conditions -----------------------------------------------------------------------

bool satisfies(const Claim& c, const Value& v, std::string* why) {
  auto fail = [&](const std::string& expected) {
    if (why) *why = "the engine gives " + format_value(v) + ", the lesson says " + expected;
    return false;
  };
  if (c.equals_list) {
    const auto* l = std::get_if<std::vector<int64_t>>(&v);
    if (!l || *l != *c.equals_list) return fail(format_value(*c.equals_list));
    return true;
  }
  if (c.equals_text) {
    const auto* s = std::get_if<std::string>(&v);
    if (!s || *s != *c.equals_text) return fail(format_value(*c.equals_text));
    return true;
  }
  const double* d = std::get_if<double>(&v);
  if (!d) {
    if (c.equals) return fail(format_value(*c.equals));
    return fail("a number");
  }
  if (c.equals) {
    const double e = *c.equals;
    const bool ok = (std::isinf(e) && *d == e) ||
                    std::fabs(*d - e) <= c.tolerance * std::max(std::fabs(e), 1e-30) ||
                    *d == e;
    if (!ok) {
      std::string s = format_value(e);
      if (c.tolerance > 0) s += " (within " + format_value(c.tolerance * 100) + " %)";
      return fail(s);
    }
  }
  if (c.at_least && !(*d >= *c.at_least)) return fail("at least " + format_value(*c.at_least));
  if (c.at_most && !(*d <= *c.at_most)) return fail("at most " + format_value(*c.at_most));
  return true;
}

bool Evaluator::holds(const Claim& claim, const Settings& base, std::string* why) {
  try {
    return satisfies(claim, evaluate(claim, base), why);
  } catch (const Error& e) {
    if (why) *why = std::string("the engine refused: ") + e.what();
    return false;
  }
}

}  // namespace attnsim::lessons
