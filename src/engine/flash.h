// FlashAttention on the CPU: the attention core computed tile by tile with the online
// softmax, never materialising the (Tq, Tk) score matrix.
//
// Index
//   [SECTION] Masks the tiled path understands      FlashMask
//   [SECTION] Options and block sizes               FlashOptions, default_flash_blocks
//   [SECTION] The IO model (slow-memory traffic)    FlashShape, FlashIo, flash_io_*
//   [SECTION] Tile events (the tile trace)          FlashEvent
//   [SECTION] The tiled core on head tensors        flash_attention_core
//   [SECTION] The whole forward pass                flash_forward
//   [SECTION] Comparison with the standard path     compare_flash_with_standard
//
// The algorithm (FlashAttention-2 loop order; per batch element b and head h):
//   q (Tq,dk), k (Tk,dk), v (Tk,dk) are the (b,h) slices of q_heads, k_heads, v_heads
//   for each query block i (rows q0 .. q0+Br-1; the last block may be shorter):
//     read Q_i (Br,dk); O_i = 0 (Br,dk); m_i = -inf (Br); l_i = 0 (Br)
//     for each key block j (keys k0 .. k0+Bc-1; the last block may be shorter):
//       if every score of tile (i,j) is hidden by the mask: skip it (nothing read)
//       read K_j (Bc,dk), V_j (Bc,dk)
//       pass 1: S_ij = Q_i·K_jᵀ · scale, hidden cells = -inf      (Br,Bc)
//       pass 2: m_new = max(m_old, rowmax(S_ij))                   (Br)
//               c     = exp(m_old - m_new)   (the rescale factor)  (Br)
//               P_ij  = exp(S_ij - m_new)                          (Br,Bc)
//               l_new = c·l_old + rowsum(P_ij)                     (Br)
//       pass 3: O_i   = c·O_i + P_ij·V_j                           (Br,dk)
//     final division: out_i = O_i / l_i; write out_i                (Br,dk)
//
// Fully hidden rows: while a row has seen no visible key its m is -inf; then c = 1 and
// P = 0 (by convention, instead of exp(-inf - -inf) = NaN), so a row whose first visible
// keys come in a later tile is not poisoned. A row that never sees a visible key ends with
// l = 0 and O = 0, and the final division 0/0 gives NaN: the same NaN the standard path's
// softmax gives (PyTorch semantics). The two paths agree on every NaN by design.
//
// Where the paths differ by design (stated here, in the CLI and in the app's flash panel):
//   * rounding: the standard path normalises alpha then multiplies by V; the tiled path sums
//     unnormalised exp(S - m) in tile order, rescales, and divides once at the end. The
//     results agree to within 2x the error of a float32 standard implementation against a
//     float64 one (compare_flash_with_standard), not bit for bit.
//   * bug modes and dropout: the tiled path runs the correct math only. MhaConfig with a
//     bug other than Bug::None / Bug::NoScale, or with dropout in train mode, is refused
//     with an Error (the standard path is the place to watch those bugs).
//   * the score-sized steps (scores, scores_scaled, mask, scores_masked, alpha,
//     alpha_dropped) are listed in the trace as skipped, note "not materialised by the tiled
//     path"; tile events show their tiles instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mask.h"
#include "mha.h"
#include "tensor.h"
#include "trace.h"

namespace attnsim {

// [SECTION] Masks the tiled path understands ------------------------------------------------
//
// The tiled path never builds the (B,1,Tq,Tk) mask: the structured parts are evaluated per
// tile (like FlashAttention's causal flag and variable lengths), so their cost stays O(T).
// A dense mask (a mask file) is read tile by tile. Semantics are exactly build_mask's:
//   causal         key j hidden from query i when j > i (top-left aligned)
//   key padding    right: keys j >= len[b] hidden;  left: keys j < Tk - len[b] hidden
//   query padding  right: rows i >= len[b] hidden;  left: rows i < Tq - len[b] hidden
//   dense          bool, broadcastable to (B,h,Tq,Tk), true = hidden
// all ORed together.
struct FlashMask {
  bool causal = false;
  std::vector<int64_t> key_lengths;    // one per batch element; empty = none
  std::vector<int64_t> query_lengths;  // one per batch element; empty = none
  PadSide side = PadSide::Right;
  Tensor dense;                        // optional bool mask, broadcastable to (B,h,Tq,Tk)

  static FlashMask from_spec(const MaskSpec& spec, const Tensor& dense = Tensor());
  bool empty() const {
    return !causal && key_lengths.empty() && query_lengths.empty() && !dense.defined();
  }
  // True when (b, h, i, j) is hidden. Slow path for tests and the app; the core does not
  // call it per element.
  bool hidden(int64_t b, int64_t h, int64_t i, int64_t j, int64_t tq, int64_t tk) const;
};

// [SECTION] Options and block sizes --------------------------------------------------------

struct FlashOptions {
  int64_t block_q = 0;       // Br, query rows per block; 0 = default_flash_blocks
  int64_t block_k = 0;       // Bc, key/value rows per block; 0 = default_flash_blocks
  bool record_tiles = false; // keep every tile event (FlashCoreResult::events); huge at large T
  int64_t trace_batch = -1;  // with record_tiles: only this batch element (-1 = all)
  int64_t trace_head = -1;   // with record_tiles: only this head (-1 = all)
  int threads = 0;           // workers over (b, h, query block); 0 = hardware threads
  int64_t mem_limit = 0;     // bytes; 0 = 75 % of physical memory (as MhaConfig)
};

struct FlashBlocks {
  int64_t block_q;  // Br
  int64_t block_k;  // Bc
};

// Sized for L2: the largest square block Br = Bc from {128, 96, 64, 48, 32, 16, 8, 4, 2, 1}
// whose fast working set flash_fast_bytes(Br, Bc, dk) fits in a quarter of this core's L2
// (the rest is left to the output rows, the prefetched next tiles and the other thread).
// 128 is FlashAttention-2's forward block for small head sizes. (The paper's rule
// Bc = M/(4·dk), Br = min(Bc, dk) gives 64 x 512 here, which measured 1.5-2x slower: a
// 512-wide K_jᵀ tile does not stay in L1 while the query rows sweep it.)
// l2_bytes = 0 reads the L2 size of this machine (sysconf; 1 MiB when unknown).
// (L2 = 2 MiB: dk = 64 -> 128 x 128 (193 KiB); dk = 512 -> 48 x 48 (393 KiB).)
FlashBlocks default_flash_blocks(int64_t head_dim, int64_t l2_bytes = 0);

// This core's L2 in bytes as sysconf reports it, 0 where the system does not say (the
// WebAssembly build): the cache default_flash_blocks sizes the tiles for (1 MiB when 0).
int64_t flash_l2_bytes();

// [SECTION] The IO model (slow-memory traffic) ----------------------------------------------
//
// The paper's model: slow memory (HBM; here RAM) holds q, k, v, the output, and for the
// standard path S and P; fast memory (SRAM; here L1/L2) holds one working set. Counts are in
// elements (float32: bytes = 4 x elements), summed over all B·h heads.
//
// Standard path, per head (S and P written out and read back; scale and mask are fused
// into the softmax pass and the mask itself is not counted):
//   S = Q·Kᵀ       reads Tq·dk + Tk·dk          writes Tq·Tk
//   P = softmax(S) reads Tq·Tk                  writes Tq·Tk
//   O = P·V        reads Tq·Tk + Tk·dk          writes Tq·dk
//   total          reads Tq·dk + 2·Tk·dk + 2·Tq·Tk,   writes 2·Tq·Tk + Tq·dk
// Tiled path, per head (m and l stay in fast memory; FlashAttention-2 also writes the
// logsumexp for the backward pass, which a forward-only simulator does not need):
//   reads  Tq·dk (each Q_i once) + Σ over visited tiles 2·cols·dk (K_j and V_j)
//   writes Tq·dk (each out_i once)
//   without skipped tiles: reads = Tq·dk + 2·ceil(Tq/Br)·Tk·dk
struct FlashShape {
  int64_t batch = 1, heads = 1, tq = 1, tk = 1, head_dim = 1;
  int64_t block_q = 1, block_k = 1;  // Br, Bc (already resolved, > 0)

  int64_t q_blocks() const { return (tq + block_q - 1) / block_q; }
  int64_t k_blocks() const { return (tk + block_k - 1) / block_k; }
};

struct FlashIo {
  int64_t reads = 0;   // elements read from slow memory
  int64_t writes = 0;  // elements written to slow memory
};

FlashIo flash_io_standard(const FlashShape& shape);            // closed form above
FlashIo flash_io_tiled_no_skip(const FlashShape& shape);       // closed form above
// The tiled count with the tiles this mask skips, per tile from the mask's structure (the
// same rule the core uses); equals the counters the core accumulates.
FlashIo flash_io_tiled(const FlashShape& shape, const FlashMask& mask);

// True when every score of tile (q_block, k_block) of head (b, h) is hidden.
bool flash_tile_hidden(const FlashShape& shape, const FlashMask& mask, int64_t b, int64_t h,
                       int64_t q_block, int64_t k_block);

// Bytes of fast memory one tile visit holds: Q_i + K_j + V_j + S_ij/P_ij (one buffer, P
// overwrites S) + O_i + m_i + l_i, all float32.
//   = 4·(rows·dk + 2·cols·dk + rows·cols + rows·dk + 2·rows)
int64_t flash_fast_bytes(int64_t rows, int64_t cols, int64_t head_dim);

// Bytes each CPU worker stages per head it visits: that head's K transposed and V, padded for
// the tile kernels, so the query blocks of one head do not transpose the same K_j again and
// again. Slow memory (a copy of one head's K and V), not part of the fast working set above.
//   = 4·(dk_p·(Tk_p + 32) + Tk·dk_p),   dk_p, Tk_p rounded up to 32
int64_t flash_stage_bytes(int64_t tk, int64_t head_dim);

// [SECTION] Tile events (the tile trace) ----------------------------------------------------
//
// Events come in the order of a sequential run: for b, for h, for query block i: the
// visits (i, 0), (i, 1), ... (skipped ones included, marked), then Final for block i. The
// result is the same whatever the thread count. The CUDA flash kernel emits the same events
// (same kinds, same fields) so the two can be compared tile by tile.
enum class FlashEventKind {
  Tile,     // a visited tile: every field below is filled
  Skipped,  // a wholly hidden tile: positions and counters only, tensors undefined
  Final,    // the final division of query block i: m, l (final), out
};
const char* flash_event_kind_name(FlashEventKind kind);  // "tile", "skipped", "final"

struct FlashEvent {
  FlashEventKind kind = FlashEventKind::Tile;
  int64_t b = 0, h = 0;              // batch element, head
  int64_t q_block = 0, k_block = 0;  // block indices (k_block = -1 for Final)
  int64_t q0 = 0, rows = 0;          // query rows q0 .. q0+rows-1 (rows < Br when ragged)
  int64_t k0 = 0, cols = 0;          // key rows k0 .. k0+cols-1 (0 for Final)

  // Tile only:
  Tensor scores;    // (rows, cols) S_ij = Q_i·K_jᵀ·scale, -inf where hidden
  Tensor m_before;  // (rows) running max before this tile (-inf: no visible key yet)
  Tensor m_after;   // (rows) running max after
  Tensor rescale;   // (rows) exp(m_before - m_after); 1 where m_after = -inf
  Tensor l_before;  // (rows) running sum before
  Tensor l_after;   // (rows) running sum after = rescale·l_before + rowsum(probs)
  Tensor probs;     // (rows, cols) P_ij = exp(S_ij - m_after); 0 where hidden
  Tensor acc;       // (rows, dk) O_i after the update (unnormalised)

  // Final only:
  Tensor m;         // (rows) final running max (= the row max of the scores)
  Tensor l;         // (rows) final running sum (= Σ_j exp(s_j - m))
  Tensor out;       // (rows, dk) O_i / l; NaN where l = 0 (fully hidden row)

  // Every kind: figures at this moment of the sequential run (after this event).
  int64_t fast_bytes = 0;   // fast memory held by this visit (flash_fast_bytes; 0 if skipped)
  int64_t held_bytes = 0;   // slow memory the tiled core holds: q,k,v heads + out + m,l
                            // of all rows + this fast working set
  FlashIo io;               // tiled slow-memory traffic so far (elements, all heads so far)
  FlashIo io_standard;      // the standard path's traffic for the same heads so far
};

// [SECTION] The tiled core on head tensors --------------------------------------------------

struct FlashStats {
  FlashShape shape;              // resolved sizes (block_q, block_k filled in)
  int64_t tiles_total = 0;       // B·h·ceil(Tq/Br)·ceil(Tk/Bc)
  int64_t tiles_visited = 0;
  int64_t tiles_skipped = 0;     // wholly hidden, not read, not computed
  FlashIo io;                    // counted while running; equals flash_io_tiled
  FlashIo io_standard;           // flash_io_standard(shape)
  int64_t fast_bytes = 0;        // one worker's fast working set, full tiles
  int64_t core_bytes = 0;        // slow memory the tiled core holds: out (B,h,Tq,dk) + m,l
                                 // (B,h,Tq) + threads x fast working set
  int64_t standard_core_bytes = 0;  // S and P of the standard path: 2·B·h·Tq·Tk·4
  int threads = 1;
};

struct FlashCoreResult {
  Tensor out;   // (B,h,Tq,dk) contiguous: the ctx_heads step
  Tensor m;     // (B,h,Tq) final running max per row
  Tensor l;     // (B,h,Tq) final running sum per row (logsumexp = m + log l)
  FlashStats stats;
  std::vector<FlashEvent> events;  // only with options.record_tiles
};

// Runs the tiled core on head tensors. q (B,h,Tq,dk), k (B,h,Tk,dk), v (B,h,Tk,dk): any
// strides (the transposed views q_heads, k_heads, v_heads are read in place). scale is
// usually 1/sqrt(dk). Throws Error on mismatched shapes, block sizes < 1, a mask whose
// lengths or shape do not fit, or a recorded tile trace bigger than the memory limit
// (predict_flash_tile_trace_bytes).
FlashCoreResult flash_attention_core(const Tensor& q, const Tensor& k, const Tensor& v,
                                     const FlashMask& mask, float scale,
                                     const FlashOptions& options = FlashOptions());

// A core run elsewhere (the CUDA kernels) counts no traffic or bytes: this fills them, and the
// visited / skipped tiles when the core left them open, with the closed forms of the shape and
// the mask, which the host core's counters equal.
void flash_closed_form_figures(FlashCoreResult& result, const FlashMask& mask);

// Bytes the recorded tile events would hold (tensors only), before anything runs.
int64_t predict_flash_tile_trace_bytes(const FlashShape& shape, const FlashOptions& options);

// [SECTION] The whole forward pass ----------------------------------------------------------
//
// Same weights, inputs and step names as forward() in mha.h:
//   query key value, q_proj k_proj v_proj (backend.linear), q_view k_view v_view,
//   q_heads k_heads v_heads (views), then scores scaled mask scores_masked alpha
//   alpha_dropped listed as skipped (not materialised), ctx_heads (op "flash", the tiled
//   core's output, (B,h,Tq,dk)), ctx_transposed (view), ctx_contiguous (copy), ctx_concat
//   (view), out (W_O, or the identity view).
struct FlashResult {
  Trace trace;
  FlashCoreResult core;           // core.out is the ctx_heads tensor of the trace
  int64_t predicted_bytes = 0;    // predict_flash_bytes(config, options)
  int64_t standard_trace_bytes = 0;  // predict_trace_bytes(config): what `trace` would hold
};

// The sizes flash_forward runs the core at: the config's, with options' blocks (0: the
// default_flash_blocks of this machine), a block longer than the sequence cut to it. Throws
// Error for a block size below 1.
FlashShape flash_shape(const MhaConfig& config, const FlashOptions& options);

// Bytes flash_forward will hold (trace tensors + core working memory + tile events when
// recorded), computed before anything is allocated.
int64_t predict_flash_bytes(const MhaConfig& config, const FlashOptions& options);

// The core is backend.flash_core. On the CUDA backend (cuda_flash_attention_core) its tile
// events carry the running m and l but not the tiles' scores, probs and acc (see
// cuda/cuda_backend.h); traffic and byte figures are the closed forms above.
// Throws Error on a bad config, an unsupported bug mode / train-mode dropout (see the top of
// this file), or predicted bytes over the limit (options.mem_limit, else config.mem_limit).
FlashResult flash_forward(const MhaConfig& config, const MhaWeights& weights,
                          const MhaInputs& inputs, const FlashOptions& options = FlashOptions(),
                          Backend& backend = cpu_backend());

// The tiled core on the heads of an existing trace (from forward() or flash_forward()) with
// the config's mask (spec OR inputs.mask_file) and scale (1/sqrt(dk); 1 with Bug::NoScale):
// what the app replays when the block sizes change. Same refusals as flash_forward.
FlashCoreResult flash_core_for_trace(const MhaConfig& config, const MhaInputs& inputs, const Trace& trace,
                                     const FlashOptions& options = FlashOptions());

// The output of a tile event's rows as it stands: acc / l_after for a Tile event (NaN where a
// row has seen no visible key yet), out for a Final event; (rows, dk). Undefined for Skipped.
// After the last tile of a query block it equals the final out (the panel's converging rows).
Tensor flash_partial_output(const FlashEvent& event);

// [SECTION] Comparison with the standard path -----------------------------------------------
//
// The exactness rule (FlashAttention's tests): with ref64 the same math in float64 from the
// same float32 inputs,
//   max|flash - std32| <= tolerance = 2 · max|std32 - ref64| + floor
// floor = FLT_EPSILON/2 · max|ref64|: the unit roundoff at the output's largest magnitude,
// i.e. the worst error of one correctly rounded float32 operation there. It matters only for
// tiny cases where the float32 standard path happens to be (nearly) exact while an equally
// valid summation order lands one rounding away (seen: B=2 h=3 Tq=7 Tk=5 dk=4, Br=Bc=1,
// key padding: |flash - std| = 4.8e-7 = one ulp at |out| ~ 4, 2·|std32 - ref64| = 3.7e-7).
// NaN must sit at the same places in both (counted separately, never hidden in a max).
struct FlashCompareFigures {
  double max_abs_diff = 0;       // max|flash - std32| over elements finite in both
  double std_error = 0;          // max|std32 - ref64|
  double flash_error = 0;        // max|flash - ref64|
  double floor = 0;
  double tolerance = 0;          // 2·std_error + floor
  int64_t nan_mismatches = 0;    // elements NaN in exactly one of flash, std32
  int64_t nan_count = 0;         // elements NaN in both
  bool ok() const { return max_abs_diff <= tolerance && nan_mismatches == 0; }
};

// Compares tensors of the same shape given the float64 reference (C order). Used by the
// core-level tests and by compare_flash_with_standard.
FlashCompareFigures compare_with_reference(const Tensor& flash, const Tensor& std32,
                                           const std::vector<double>& ref64);

// The attention core in float64 with plain loops (the oracle): q,k,v as float32 heads,
// result (B,h,Tq,dk) in C order; fully hidden rows are NaN.
std::vector<double> attention_core_f64(const Tensor& q, const Tensor& k, const Tensor& v,
                                       const FlashMask& mask, double scale);

// The standard core in float32 with plain loops, same shapes (S, softmax, P·V): the
// same-math baseline when the engine's forward() is not wanted.
Tensor attention_core_f32(const Tensor& q, const Tensor& k, const Tensor& v,
                          const FlashMask& mask, float scale);

struct FlashComparison {
  FlashCompareFigures ctx_heads;  // the core output (B,h,Tq,dk)
  FlashCompareFigures out;        // after W_O (B,Tq,d); ref64 applies W_O in float64
  int64_t standard_bytes = 0;     // bytes the standard trace held
};

// Runs forward() (the standard path, same config, weights and inputs) and compares.
// Throws Error when the standard path's predicted memory exceeds the limit.
FlashComparison compare_flash_with_standard(const MhaConfig& config, const MhaWeights& weights,
                                            const MhaInputs& inputs, const FlashResult& flash,
                                            Backend& backend = cpu_backend());

}  // namespace attnsim
