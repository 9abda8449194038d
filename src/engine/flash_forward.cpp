// flash_forward: the forward pass of mha.cpp with the tiled core in place of
// scores .. alpha_dropped. Same weights, inputs, projections, views and step names.
// The core is the backend's flash_core (the host loop on the CPU, the kernels on CUDA).
#include <cmath>

#include "checked.h"
#include "cost.h"
#include "error.h"
#include "flash.h"
#include "forward_steps.h"
#include "parallel.h"

namespace attnsim {

namespace {

void check_supported(const MhaConfig& c) {
  if (c.bug != Bug::None && c.bug != Bug::NoScale)
    throw Error(std::string("the tiled path runs the correct math only; bug '") + bug_name(c.bug) +
                "' is shown by the standard path (attnsim-cli trace --bug ...)");
  if (c.train && c.dropout > 0)
    throw Error("the tiled path runs in eval mode only (no dropout); drop --train or use --dropout 0");
  if (c.grouped())
    throw Error("the tiled path reads one K/V head per query head; kv-heads < heads runs on the standard path");
}

}  // namespace

FlashShape flash_shape(const MhaConfig& c, const FlashOptions& o) {
  const int64_t dk = c.head_dim();
  const FlashBlocks def = default_flash_blocks(dk);
  FlashShape s{c.batch, c.heads, c.tq, c.tk, dk, o.block_q ? o.block_q : def.block_q,
               o.block_k ? o.block_k : def.block_k};
  if (s.block_q < 1 || s.block_k < 1)
    throw Error("flash: block sizes must be positive, got --block-q " + std::to_string(s.block_q) +
                " --block-k " + std::to_string(s.block_k));
  s.block_q = std::min(s.block_q, s.tq);
  s.block_k = std::min(s.block_k, s.tk);
  return s;
}

int64_t predict_flash_bytes(const MhaConfig& c, const FlashOptions& o) {
  validate(c);
  const FlashShape s = flash_shape(c, o);
  const Size f = 4, B = c.batch, Tq = c.tq, Tk = c.tk, d = c.d_model, h = c.heads;  // checked
  const Size q_side = B * Tq * d * f, k_side = B * Tk * d * f;
  const Size threads = o.threads > 0 ? o.threads : default_threads();
  Size bytes = c.self_attention ? q_side : q_side + Size(2) * k_side;  // query key value
  bytes += q_side + Size(2) * k_side;                                  // q_proj k_proj v_proj
  bytes += q_side + Size(2) * B * h * Tq * f;                          // ctx_heads, m, l
  bytes += threads * (Size(flash_fast_bytes(s.block_q, s.block_k, s.head_dim)) + flash_stage_bytes(s.tk, s.head_dim));
  bytes += q_side;                                                     // ctx_contiguous
  if (!c.wo_identity) bytes += q_side;                                 // out
  return (bytes + predict_flash_tile_trace_bytes(s, o)).value();
}

FlashResult flash_forward(const MhaConfig& c, const MhaWeights& w, const MhaInputs& in,
                          const FlashOptions& options, Backend& be) {
  validate(c);
  check_supported(c);
  check_inputs(c, in);
  FlashOptions o = options;
  if (o.mem_limit <= 0) o.mem_limit = effective_mem_limit(c);
  FlashResult result;
  result.predicted_bytes = predict_flash_bytes(c, o);
  result.standard_trace_bytes = predict_trace_bytes(c);
  if (result.predicted_bytes > o.mem_limit) {
    const int64_t tiles = predict_flash_tile_trace_bytes(flash_shape(c, o), o);
    throw Error("the tiled path needs " + human_bytes(result.predicted_bytes) + " (" +
                format_count(result.predicted_bytes) + " bytes), over the limit of " + human_bytes(o.mem_limit) +
                (tiles > 0 ? "; the tile trace would hold " + human_bytes(tiles) +
                                 " of it: record one head (--tiles-head B:H) or use a shorter sequence"
                           : ""));
  }
  Trace& t = result.trace;

  const Heads heads = add_head_steps(t, c, w, in, be);

  // the score-sized steps are not materialised            (B,h,Tq,Tk) never held
  const std::string not_held = "not materialised by the tiled path (see the tile events)";
  t.add(skipped_step("scores", "matmul q·kᵀ", {heads.q_name, heads.k_name}, not_held));
  t.add(skipped_step("scores_scaled", "scale ×1/√dk", {"scores"}, not_held));
  const FlashMask mask = FlashMask::from_spec(c.mask, in.mask_file);
  t.add(skipped_step("mask", "build mask", {},
                     mask.empty() ? "no mask"
                                  : "mask " + format_mask_spec(c.mask) + (in.mask_file.defined() ? " + mask file" : "") +
                                        ": evaluated per tile, " + not_held));
  t.add(skipped_step("scores_masked", "masked_fill(-inf)", {"scores_scaled", "mask"}, not_held));
  t.add(skipped_step("alpha", "softmax(dim=-1)", {"scores_masked"}, "online softmax per tile; " + not_held));
  t.add(skipped_step("alpha_dropped", "dropout", {"alpha"}, "eval mode: dropout is the identity"));

  // the tiled core                                        (B,h,Tq,dk) new storage
  result.core = be.flash_core(heads.q, heads.k, heads.v, mask, attention_scale(c), o);
  const FlashShape& s = result.core.stats.shape;
  const std::string op = "flash (online softmax, Br=" + std::to_string(s.block_q) + ", Bc=" +
                         std::to_string(s.block_k) + ")";
  t.add(made_step("ctx_heads", op.c_str(), {heads.q_name, heads.k_name, "v_heads", "mask"}, StepKind::Compute,
                  result.core.out, be.name()));

  add_merge_steps(t, c, w, result.core.out, be);
  return result;
}

FlashCoreResult flash_core_for_trace(const MhaConfig& c, const MhaInputs& in, const Trace& trace,
                                     const FlashOptions& options) {
  validate(c);
  check_supported(c);
  FlashOptions o = options;
  if (o.mem_limit <= 0) o.mem_limit = effective_mem_limit(c);
  const float scale = attention_scale(c);
  return flash_attention_core(core_q(trace), core_k(trace), trace.at("v_heads").out,
                              FlashMask::from_spec(c.mask, in.mask_file), scale, o);
}

Tensor flash_partial_output(const FlashEvent& e) {
  if (e.kind == FlashEventKind::Final) return e.out;
  if (e.kind != FlashEventKind::Tile || !e.acc.defined()) return Tensor();
  const int64_t rows = e.acc.size(0), dk = e.acc.size(1);
  Tensor out = Tensor::empty({rows, dk});  // (rows, dk) new storage
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t x = 0; x < dk; ++x) out.f32()[r * dk + x] = e.acc.f32()[r * dk + x] / e.l_after.f32()[r];
  return out;
}

}  // namespace attnsim
