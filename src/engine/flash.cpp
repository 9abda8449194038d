// The tiled FlashAttention core on the CPU (see flash.h for the algorithm and its shapes).
//
// Index
//   [SECTION] masks            FlashMask, the per-row visible key interval
//   [SECTION] block sizes and the IO model
//   [SECTION] tile kernels     S = Q·Kᵀ, O += P·V on padded fast buffers
//   [SECTION] the tiled core   one work item = (b, h, query block), FlashAttention-2 order
//   [SECTION] the forward pass
#include "flash.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "cost.h"
#include "checked.h"
#include "error.h"
#include "parallel.h"
#include "vector_exp.h"

namespace attnsim {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::string n2s(int64_t v) { return std::to_string(v); }

int64_t physical_limit() {
  const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  return physical / 4 * 3;
}

}  // namespace

// [SECTION] masks ------------------------------------------------------------------------------

FlashMask FlashMask::from_spec(const MaskSpec& spec, const Tensor& dense) {
  FlashMask m;
  m.causal = spec.causal;
  m.key_lengths = spec.key_lengths;
  m.query_lengths = spec.query_lengths;
  m.side = spec.side;
  m.dense = dense;
  return m;
}

namespace {

// The mask prepared for one run: lengths checked, the dense part expanded to (B,h,Tq,Tk).
struct MaskPlan {
  const FlashMask* mask;
  int64_t tq, tk;
  Tensor dense;  // (B,h,Tq,Tk) bool view with broadcast strides, or undefined

  // Visible keys of row i of batch b from the structured parts: [lo, hi) (empty: lo >= hi).
  void row_interval(int64_t b, int64_t i, int64_t* lo, int64_t* hi) const {
    int64_t a = 0, z = tk;
    const FlashMask& m = *mask;
    if (!m.query_lengths.empty()) {
      const int64_t len = m.query_lengths[b];
      const bool pad = m.side == PadSide::Right ? i >= len : i < tq - len;
      if (pad) z = 0;
    }
    if (!m.key_lengths.empty()) {
      const int64_t len = m.key_lengths[b];
      if (m.side == PadSide::Right) z = std::min(z, len);
      else a = std::max(a, tk - len);
    }
    if (m.causal) z = std::min(z, i + 1);
    *lo = a;
    *hi = z;
  }
  bool dense_hidden(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (!dense.defined()) return false;
    const Dims& s = dense.strides();
    return dense.b8()[b * s[0] + h * s[1] + i * s[2] + j * s[3]] != 0;
  }
  bool hidden(int64_t b, int64_t h, int64_t i, int64_t j) const {
    int64_t lo, hi;
    row_interval(b, i, &lo, &hi);
    return j < lo || j >= hi || dense_hidden(b, h, i, j);
  }
  // Every score of rows [q0, q0+rows) x keys [k0, k0+cols) hidden?
  bool tile_hidden(int64_t b, int64_t h, int64_t q0, int64_t rows, int64_t k0, int64_t cols) const {
    for (int64_t r = 0; r < rows; ++r) {
      int64_t lo, hi;
      row_interval(b, q0 + r, &lo, &hi);
      lo = std::max(lo, k0);
      hi = std::min(hi, k0 + cols);
      if (lo >= hi) continue;
      if (!dense.defined()) return false;
      for (int64_t j = lo; j < hi; ++j)
        if (!dense_hidden(b, h, q0 + r, j)) return false;
    }
    return true;
  }
};

void check_lengths(const char* what, const std::vector<int64_t>& lengths, int64_t batch, int64_t limit) {
  if (lengths.empty()) return;
  if (static_cast<int64_t>(lengths.size()) != batch)
    throw Error(std::string(what) + " has " + n2s(lengths.size()) + " lengths but the batch has " +
                n2s(batch));
  for (int64_t len : lengths)
    if (len < 0 || len > limit)
      throw Error(std::string(what) + " length " + n2s(len) + " is outside 0.." + n2s(limit));
}

MaskPlan plan_mask(const FlashMask& mask, int64_t B, int64_t H, int64_t tq, int64_t tk) {
  check_lengths("key-padding", mask.key_lengths, B, tk);
  check_lengths("query-padding", mask.query_lengths, B, tq);
  MaskPlan plan{&mask, tq, tk, Tensor()};
  if (mask.dense.defined()) {
    const Dims full{B, H, tq, tk};
    if (mask.dense.dtype() != DType::Bool)
      throw Error("the mask must be bool (true = hidden), got " + std::string(dtype_name(mask.dense.dtype())));
    if (mask.dense.dim() > 4 || broadcast_shapes(mask.dense.shape(), full) != full)
      throw Error("mask of shape " + format_dims(mask.dense.shape()) +
                  " does not broadcast to the scores' shape " + format_dims(full));
    Dims shape = mask.dense.shape();
    Tensor d = mask.dense;
    while (shape.size() < 4) shape.insert(shape.begin(), 1);
    if (d.dim() < 4) d = d.reshape(shape);  // view when possible
    plan.dense = d.expand(full);            // view, broadcast dims get stride 0
  }
  return plan;
}

}  // namespace

bool FlashMask::hidden(int64_t b, int64_t h, int64_t i, int64_t j, int64_t tq, int64_t tk) const {
  if (dense.defined()) {  // broadcast from the right: dim k of dense is dim 4 - dim + k of (b,h,i,j)
    const int64_t idx[4] = {b, h, i, j};
    const int64_t nd = dense.dim();
    int64_t pos = 0;
    for (int64_t k = 0; k < nd; ++k)
      if (dense.shape()[k] != 1) pos += idx[4 - nd + k] * dense.strides()[k];
    if (dense.b8()[pos]) return true;
  }
  const MaskPlan plan{this, tq, tk, Tensor()};
  return plan.hidden(b, h, i, j);
}

// [SECTION] block sizes and the IO model -------------------------------------------------------

int64_t flash_l2_bytes() {
#ifdef _SC_LEVEL2_CACHE_SIZE
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? l2 : 0;
#else
  return 0;  // no such query (WebAssembly)
#endif
}

FlashBlocks default_flash_blocks(int64_t dk, int64_t l2_bytes) {
  if (l2_bytes <= 0) {
    const int64_t l2 = flash_l2_bytes();
    l2_bytes = l2 > 0 ? l2 : (1 << 20);
  }
  for (int64_t b : {128, 96, 64, 48, 32, 16, 8, 4, 2})  // multiples of the kernels' padding first
    if (flash_fast_bytes(b, b, dk) <= l2_bytes / 4) return {b, b};
  return {1, 1};
}

FlashIo flash_io_standard(const FlashShape& s) {
  const Size heads = Size(s.batch) * s.heads, dk = s.head_dim, tq = s.tq, tk = s.tk;  // checked
  FlashIo io;
  io.reads = (heads * (tq * dk + Size(2) * tk * dk + Size(2) * tq * tk)).value();
  io.writes = (heads * (Size(2) * tq * tk + tq * dk)).value();
  return io;
}

FlashIo flash_io_tiled_no_skip(const FlashShape& s) {
  const Size heads = Size(s.batch) * s.heads, dk = s.head_dim, tq = s.tq, tk = s.tk;  // checked
  return {(heads * (tq * dk + Size(2) * s.q_blocks() * tk * dk)).value(), (heads * tq * dk).value()};
}

bool flash_tile_hidden(const FlashShape& s, const FlashMask& mask, int64_t b, int64_t h,
                       int64_t qb, int64_t kb) {
  const MaskPlan plan = plan_mask(mask, s.batch, s.heads, s.tq, s.tk);
  const int64_t q0 = qb * s.block_q, k0 = kb * s.block_k;
  return plan.tile_hidden(b, h, q0, std::min(s.block_q, s.tq - q0), k0, std::min(s.block_k, s.tk - k0));
}

FlashIo flash_io_tiled(const FlashShape& s, const FlashMask& mask) {
  const MaskPlan plan = plan_mask(mask, s.batch, s.heads, s.tq, s.tk);
  const int64_t dk = s.head_dim;
  FlashIo io;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t qb = 0; qb < s.q_blocks(); ++qb) {
        const int64_t q0 = qb * s.block_q, rows = std::min(s.block_q, s.tq - q0);
        io.reads += rows * dk;   // Q_i
        io.writes += rows * dk;  // out_i
        for (int64_t kb = 0; kb < s.k_blocks(); ++kb) {
          const int64_t k0 = kb * s.block_k, cols = std::min(s.block_k, s.tk - k0);
          if (!plan.tile_hidden(b, h, q0, rows, k0, cols)) io.reads += 2 * cols * dk;  // K_j, V_j
        }
      }
  return io;
}

int64_t flash_fast_bytes(int64_t rows, int64_t cols, int64_t dk) {
  const Size r = rows, c = cols, k = dk;  // checked: the sizes may come from a lesson
  return (Size(4) * (r * k + Size(2) * c * k + r * c + r * k + Size(2) * r)).value();
}

void flash_closed_form_figures(FlashCoreResult& r, const FlashMask& mask) {
  FlashStats& st = r.stats;
  const FlashShape& s = st.shape;
  st.io = flash_io_tiled(s, mask);
  st.io_standard = flash_io_standard(s);
  st.fast_bytes = flash_fast_bytes(s.block_q, s.block_k, s.head_dim);
  st.core_bytes = r.out.nbytes() + (r.m.defined() ? r.m.nbytes() : 0) + (r.l.defined() ? r.l.nbytes() : 0);
  st.standard_core_bytes = 2 * s.batch * s.heads * s.tq * s.tk * 4;
  if (st.tiles_visited + st.tiles_skipped != st.tiles_total) {
    st.tiles_visited = st.tiles_skipped = 0;
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t h = 0; h < s.heads; ++h)
        for (int64_t qb = 0; qb < s.q_blocks(); ++qb)
          for (int64_t kb = 0; kb < s.k_blocks(); ++kb)
            ++(flash_tile_hidden(s, mask, b, h, qb, kb) ? st.tiles_skipped : st.tiles_visited);
  }
}

int64_t flash_stage_bytes(int64_t tk, int64_t dk) {
  const Size k = (dk + 31) / 32 * 32, t = tk, ld = Size((tk + 31) / 32 * 32) + 32;  // checked
  return (Size(4) * (k * ld + t * k)).value();
}

const char* flash_event_kind_name(FlashEventKind kind) {
  switch (kind) {
    case FlashEventKind::Tile: return "tile";
    case FlashEventKind::Skipped: return "skipped";
    case FlashEventKind::Final: return "final";
  }
  return "?";
}

namespace {

bool traced_head(const FlashOptions& o, int64_t b, int64_t h) {
  return o.record_tiles && (o.trace_batch < 0 || o.trace_batch == b) && (o.trace_head < 0 || o.trace_head == h);
}

// Tensor bytes plus a rough per-tensor and per-event overhead.
constexpr int64_t kTensorOverhead = 160;
constexpr int64_t kEventOverhead = static_cast<int64_t>(sizeof(FlashEvent));

}  // namespace

int64_t predict_flash_tile_trace_bytes(const FlashShape& s, const FlashOptions& o) {
  if (!o.record_tiles) return 0;
  const Size bs = o.trace_batch >= 0 ? 1 : s.batch, hs = o.trace_head >= 0 ? 1 : s.heads;  // checked
  const Size dk = s.head_dim, tq = s.tq, tk = s.tk, qb = s.q_blocks(), kb = s.k_blocks();
  // Upper bound: every tile visited. Σ rows·cols over tiles = Tq·Tk; Σ rows = Tq per k block.
  const Size tiles = qb * kb;
  const Size tile_bytes = Size(4) * (Size(2) * tq * tk + Size(5) * tq * kb + tq * kb * dk) +
                          tiles * (kEventOverhead + 8 * kTensorOverhead);
  const Size final_bytes = Size(4) * (Size(2) * tq + tq * dk) + qb * (kEventOverhead + 3 * kTensorOverhead);
  return (bs * hs * (tile_bytes + final_bytes)).value();
}

// [SECTION] tile kernels -----------------------------------------------------------------------
//
// Fast buffers are padded so the kernels run on whole vectors: rows to a multiple of kRowPad,
// columns and dk to a multiple of 32. Padding is zero and never read back as a result.

namespace {

typedef float v16 __attribute__((vector_size(64), aligned(4)));  // 16 floats, unaligned loads ok

// Each kernel step keeps kRowPad rows x 32 columns of results in registers: 8 rows (16 zmm
// accumulators) where AVX-512 has 32 vector registers, 4 rows where AVX2 has 16.
#if defined(__AVX512F__)
constexpr int64_t kRowPad = 8;
#else
constexpr int64_t kRowPad = 4;
#endif
constexpr int64_t kColPad = 32;
int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// S (rows_p, ldS) = (Q (rows_p, ldQ) · KT (dk, ldK))·scale, cols_p columns (multiple of 32).
// The scale multiplies each finished dot product, exactly as a separate pass would.
void tile_qk(const float* Q, int64_t ldq, const float* KT, int64_t ldk, float* S, int64_t lds,
             int64_t rows_p, int64_t cols_p, int64_t dk, float scale) {
  for (int64_t r = 0; r < rows_p; r += kRowPad)
    for (int64_t j = 0; j < cols_p; j += 32) {
      v16 acc[kRowPad][2] = {};
      const float* q = Q + r * ldq;
      for (int64_t c = 0; c < dk; ++c) {
        const v16 k0 = *reinterpret_cast<const v16*>(KT + c * ldk + j);
        const v16 k1 = *reinterpret_cast<const v16*>(KT + c * ldk + j + 16);
#pragma GCC unroll 8
        for (int64_t i = 0; i < kRowPad; ++i) {
          const float x = q[i * ldq + c];
          acc[i][0] += x * k0;
          acc[i][1] += x * k1;
        }
      }
#pragma GCC unroll 8
      for (int64_t i = 0; i < kRowPad; ++i) {
        float* s = S + (r + i) * lds + j;
        *reinterpret_cast<v16*>(s) = acc[i][0] * scale;
        *reinterpret_cast<v16*>(s + 16) = acc[i][1] * scale;
      }
    }
}

// O (rows_p, ldO) += P (rows_p, ldP) · V (cols, ldV), dk_p columns (multiple of 32).
void tile_pv(const float* P, int64_t ldp, const float* V, int64_t ldv, float* O, int64_t ldo,
             int64_t rows_p, int64_t cols, int64_t dk_p) {
  for (int64_t r = 0; r < rows_p; r += kRowPad)
    for (int64_t c = 0; c < dk_p; c += 32) {
      v16 acc[kRowPad][2];
#pragma GCC unroll 8
      for (int64_t i = 0; i < kRowPad; ++i) {
        acc[i][0] = *reinterpret_cast<const v16*>(O + (r + i) * ldo + c);
        acc[i][1] = *reinterpret_cast<const v16*>(O + (r + i) * ldo + c + 16);
      }
      const float* p = P + r * ldp;
      for (int64_t j = 0; j < cols; ++j) {
        const v16 v0 = *reinterpret_cast<const v16*>(V + j * ldv + c);
        const v16 v1 = *reinterpret_cast<const v16*>(V + j * ldv + c + 16);
#pragma GCC unroll 8
        for (int64_t i = 0; i < kRowPad; ++i) {
          const float x = p[i * ldp + j];
          acc[i][0] += x * v0;
          acc[i][1] += x * v1;
        }
      }
#pragma GCC unroll 8
      for (int64_t i = 0; i < kRowPad; ++i) {
        *reinterpret_cast<v16*>(O + (r + i) * ldo + c) = acc[i][0];
        *reinterpret_cast<v16*>(O + (r + i) * ldo + c + 16) = acc[i][1];
      }
    }
}

// max(x[0..n)) skipping NaN, as the sequential std::max(m, x[j]) does: lane-wise
// m = x > m ? x : m keeps m on NaN too, so the lanes' maximum is the same number.
float row_max(const float* x, int64_t n) {
  v16 m16;
  for (int i = 0; i < 16; ++i) m16[i] = kNegInf;
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const v16 x16 = *reinterpret_cast<const v16*>(x + j);
    m16 = x16 > m16 ? x16 : m16;
  }
  float m = kNegInf;
  for (int i = 0; i < 16; ++i) m = std::max(m, m16[i]);
  for (; j < n; ++j) m = std::max(m, x[j]);
  return m;
}

// A 64-byte aligned float buffer, zeroed.
struct FastBuffer {
  float* p = nullptr;
  explicit FastBuffer(int64_t n) {
    const size_t bytes = static_cast<size_t>(round_up(std::max<int64_t>(n, 16) * 4, 64));
    p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (!p) throw Error("flash: cannot allocate " + human_bytes(static_cast<int64_t>(bytes)) + " of fast buffers");
    std::memset(p, 0, bytes);
  }
  ~FastBuffer() { std::free(p); }
  FastBuffer(const FastBuffer&) = delete;
  FastBuffer& operator=(const FastBuffer&) = delete;
};

Tensor tensor_from(const float* src, int64_t rows, int64_t cols, int64_t ld) {  // (rows, cols) copy
  Tensor t = Tensor::empty({rows, cols});
  for (int64_t r = 0; r < rows; ++r) std::memcpy(t.f32() + r * cols, src + r * ld, sizeof(float) * cols);
  return t;
}
Tensor vector_from(const float* src, int64_t n) {  // (n) copy
  Tensor t = Tensor::empty({n});
  std::memcpy(t.f32(), src, sizeof(float) * n);
  return t;
}

}  // namespace

// [SECTION] the tiled core ---------------------------------------------------------------------

namespace {

struct CoreArgs {
  const Tensor *q, *k, *v;
  const MaskPlan* mask;
  float scale;
  FlashShape s;
  const FlashOptions* options;
  float *out, *m, *l;  // (B,h,Tq,dk), (B,h,Tq), (B,h,Tq) contiguous
};

// Per work item: counters and the events it recorded (io filled in afterwards).
struct ItemResult {
  int64_t visited = 0, skipped = 0;
  FlashIo io;
  FlashIo io_std;                     // the standard path's traffic for the same cells
  std::vector<FlashEvent> events;
  std::vector<FlashIo> event_io;      // tiled traffic of each event (delta)
  std::vector<FlashIo> event_io_std;  // standard traffic of each event (delta)
};

// The working set of one worker, sized for full tiles, and the head it has staged:
//   KT (dk_p, ld_kt)  K of head `staged` transposed; tile j reads columns k0 .. k0+cols_p
//   V  (Tk, dk_p)     V of that head, dk padded
// Staging once per head (flash_stage_bytes) replaced a transpose of K_j in every tile visit,
// which cost about a quarter of the core at T = 16384.
struct Worker {
  int64_t br_p, bc_p, dk_p, ld_kt;
  FastBuffer Q, S, O, KT, V;
  int64_t staged = -1;  // b·H + h of the staged head
  std::vector<float> m, l, c;  // running max, running sum, rescale factor (rows)
  std::vector<int64_t> lo, hi;
  Worker(int64_t br, int64_t bc, int64_t dk, int64_t tk)
      : br_p(round_up(br, kRowPad)), bc_p(round_up(bc, kColPad)), dk_p(round_up(dk, kColPad)),
        ld_kt(round_up(tk, kColPad) + kColPad), Q(br_p * dk_p), S(br_p * bc_p), O(br_p * dk_p),
        KT(dk_p * ld_kt), V(tk * dk_p), m(br_p), l(br_p), c(br_p), lo(br_p), hi(br_p) {}
};

// Copies head (b, h)'s K (transposed) and V into the worker's stage. Columns past Tk and the
// dk padding stay zero (the buffers start zeroed and only real cells are written).
void stage_head(const CoreArgs& a, Worker& w, int64_t b, int64_t h) {
  const int64_t head = b * a.s.heads + h;
  if (w.staged == head) return;
  const int64_t dk = a.s.head_dim, tk = a.s.tk;
  const Dims& ks = a.k->strides();
  const Dims& vs = a.v->strides();
  const float* kbase = a.k->f32() + b * ks[0] + h * ks[1];
  const float* vbase = a.v->f32() + b * vs[0] + h * vs[1];
  for (int64_t j = 0; j < tk; ++j) {
    const float* kr = kbase + j * ks[2];
    const float* vr = vbase + j * vs[2];
    float* vd = w.V.p + j * w.dk_p;
    for (int64_t c = 0; c < dk; ++c) {
      w.KT.p[c * w.ld_kt + j] = kr[c * ks[3]];
      vd[c] = vr[c * vs[3]];
    }
  }
  w.staged = head;
}

void run_item(const CoreArgs& a, Worker& w, int64_t b, int64_t h, int64_t qb, ItemResult& res) {
  const FlashShape& s = a.s;
  const int64_t dk = s.head_dim, dk_p = w.dk_p, bc_p = w.bc_p;
  const int64_t q0 = qb * s.block_q, rows = std::min(s.block_q, s.tq - q0);
  const int64_t rows_p = round_up(rows, kRowPad);
  const bool record = traced_head(*a.options, b, h);
  const Dims& qs = a.q->strides();
  const float* qbase = a.q->f32() + b * qs[0] + h * qs[1];
  stage_head(a, w, b, h);

  // read Q_i                                                   (rows, dk) -> fast (rows_p, dk_p)
  std::memset(w.Q.p, 0, sizeof(float) * rows_p * dk_p);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < dk; ++c) w.Q.p[r * dk_p + c] = qbase[(q0 + r) * qs[2] + c * qs[3]];
  // O_i = 0, m_i = -inf, l_i = 0
  std::memset(w.O.p, 0, sizeof(float) * rows_p * dk_p);
  std::fill(w.m.begin(), w.m.end(), kNegInf);
  std::fill(w.l.begin(), w.l.end(), 0.0f);
  for (int64_t r = 0; r < rows; ++r) a.mask->row_interval(b, q0 + r, &w.lo[r], &w.hi[r]);
  const bool dense = a.mask->dense.defined();

  FlashIo first_io{rows * dk, 0};                         // Q_i read once
  FlashIo first_std{0, 0};
  if (qb == 0) first_std.reads = s.tq * dk + 2 * s.tk * dk;  // standard: Q, K, V once per head
  res.io.reads += rows * dk;
  bool first = true;
  auto push = [&](FlashEvent&& e, FlashIo io, FlashIo io_std) {
    res.io_std.reads += io_std.reads + (first ? first_std.reads : 0);
    res.io_std.writes += io_std.writes;
    if (first) {
      io.reads += first_io.reads;
      io_std.reads += first_std.reads;
      first = false;
    }
    if (!record) return;
    res.events.push_back(std::move(e));
    res.event_io.push_back(io);
    res.event_io_std.push_back(io_std);
  };

  for (int64_t kb = 0; kb < s.k_blocks(); ++kb) {
    const int64_t k0 = kb * s.block_k, cols = std::min(s.block_k, s.tk - k0);
    const int64_t cols_p = round_up(cols, kColPad);
    const FlashIo tile_std{2 * rows * cols, 2 * rows * cols};  // standard: S and P out and back
    FlashEvent e;
    e.b = b, e.h = h, e.q_block = qb, e.k_block = kb, e.q0 = q0, e.rows = rows, e.k0 = k0, e.cols = cols;
    if (a.mask->tile_hidden(b, h, q0, rows, k0, cols)) {  // wholly hidden: skip, read nothing
      ++res.skipped;
      e.kind = FlashEventKind::Skipped;
      push(std::move(e), FlashIo{}, tile_std);
      continue;
    }
    ++res.visited;
    res.io.reads += 2 * cols * dk;

    // pass 1: S_ij = Q_i·K_jᵀ·scale, hidden = -inf            (rows, cols)
    // K_j and V_j are read from the head's stage in place (stage_head).
    tile_qk(w.Q.p, dk_p, w.KT.p + k0, w.ld_kt, w.S.p, bc_p, rows_p, cols_p, dk, a.scale);
    for (int64_t r = 0; r < rows; ++r) {
      float* srow = w.S.p + r * bc_p;
      const int64_t lo = std::clamp(w.lo[r] - k0, int64_t{0}, cols);
      const int64_t hi = std::clamp(w.hi[r] - k0, lo, cols);
      for (int64_t j = 0; j < lo; ++j) srow[j] = kNegInf;
      for (int64_t j = hi; j < cols; ++j) srow[j] = kNegInf;
      if (dense)
        for (int64_t j = lo; j < hi; ++j)
          if (a.mask->dense_hidden(b, h, q0 + r, k0 + j)) srow[j] = kNegInf;
    }
    if (record) {
      e.scores = tensor_from(w.S.p, rows, cols, bc_p);
      e.m_before = vector_from(w.m.data(), rows);
      e.l_before = vector_from(w.l.data(), rows);
    }

    // pass 2: online softmax                                   m, c, P, l  (rows), (rows, cols)
    for (int64_t r = 0; r < rows; ++r) {
      float* srow = w.S.p + r * bc_p;
      const float m_old = w.m[r], m_new = std::max(m_old, row_max(srow, cols));
      float c = 1.0f, sum = 0.0f;
      if (m_new == kNegInf) {  // no visible key yet: P = 0, nothing to rescale
        for (int64_t j = 0; j < cols; ++j) srow[j] = 0.0f;
      } else {
        c = std::exp(m_old - m_new);  // exp(-inf) = 0 on the first visible tile
        // P = exp(S - m_new) in place, with the standard path's vector exp (vector_exp.h);
        // exp(-inf) = 0 where hidden
        sum = exp_shifted_sum(srow, m_new, srow, cols);
      }
      w.m[r] = m_new;
      w.c[r] = c;
      w.l[r] = c * w.l[r] + sum;
      if (c != 1.0f) {
        float* orow = w.O.p + r * dk_p;
        for (int64_t d = 0; d < dk_p; ++d) orow[d] *= c;
      }
    }
    for (int64_t r = 0; r < rows; ++r)  // padded columns of P stay 0 for the P·V kernel
      for (int64_t j = cols; j < cols_p; ++j) w.S.p[r * bc_p + j] = 0.0f;

    // pass 3: O_i += P_ij·V_j                                  (rows, dk)
    tile_pv(w.S.p, bc_p, w.V.p + k0 * dk_p, dk_p, w.O.p, dk_p, rows_p, cols, dk_p);

    if (record) {
      e.kind = FlashEventKind::Tile;
      e.m_after = vector_from(w.m.data(), rows);
      e.rescale = vector_from(w.c.data(), rows);
      e.l_after = vector_from(w.l.data(), rows);
      e.probs = tensor_from(w.S.p, rows, cols, bc_p);
      e.acc = tensor_from(w.O.p, rows, dk, dk_p);
      e.fast_bytes = flash_fast_bytes(rows, cols, dk);
    }
    push(std::move(e), FlashIo{2 * cols * dk, 0}, tile_std);
  }

  // final division: out_i = O_i / l_i (0/0 = NaN for a row that saw no visible key)
  float* out = a.out + ((b * s.heads + h) * s.tq + q0) * dk;
  float* mo = a.m + (b * s.heads + h) * s.tq + q0;
  float* lo = a.l + (b * s.heads + h) * s.tq + q0;
  for (int64_t r = 0; r < rows; ++r) {
    const float inv_l = w.l[r];
    for (int64_t c = 0; c < dk; ++c) out[r * dk + c] = w.O.p[r * dk_p + c] / inv_l;
    mo[r] = w.m[r];
    lo[r] = w.l[r];
  }
  res.io.writes += rows * dk;
  FlashEvent e;
  e.kind = FlashEventKind::Final;
  e.b = b, e.h = h, e.q_block = qb, e.k_block = -1, e.q0 = q0, e.rows = rows;
  if (record) {
    e.m = vector_from(mo, rows);
    e.l = vector_from(lo, rows);
    e.out = tensor_from(out, rows, dk, dk);
    e.fast_bytes = flash_fast_bytes(rows, 0, dk);
  }
  push(std::move(e), FlashIo{0, rows * dk}, FlashIo{0, rows * dk});
}

}  // namespace

FlashCoreResult flash_attention_core(const Tensor& q, const Tensor& k, const Tensor& v,
                                     const FlashMask& mask, float scale, const FlashOptions& o) {
  for (const Tensor* t : {&q, &k, &v})
    if (!t->defined() || t->dim() != 4 || t->dtype() != DType::F32)
      throw Error("flash: q, k and v must be float32 (B,h,T,dk) tensors");
  const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), dk = q.size(3), Tk = k.size(2);
  if (k.shape() != Dims{B, H, Tk, dk} || v.shape() != Dims{B, H, Tk, dk})
    throw Error("flash: q " + format_dims(q.shape()) + ", k " + format_dims(k.shape()) + " and v " +
                format_dims(v.shape()) + " do not fit (want (B,h,Tq,dk), (B,h,Tk,dk), (B,h,Tk,dk))");
  if (B < 1 || H < 1 || Tq < 1 || Tk < 1 || dk < 1)
    throw Error("flash: every size must be positive, got q " + format_dims(q.shape()) + ", k " +
                format_dims(k.shape()));
  const FlashBlocks def = default_flash_blocks(dk);
  FlashShape s{B, H, Tq, Tk, dk, o.block_q ? o.block_q : def.block_q, o.block_k ? o.block_k : def.block_k};
  if (s.block_q < 1 || s.block_k < 1)
    throw Error("flash: block sizes must be positive, got Br=" + n2s(s.block_q) + " Bc=" + n2s(s.block_k));
  s.block_q = std::min(s.block_q, Tq);  // a block larger than the sequence is the whole sequence
  s.block_k = std::min(s.block_k, Tk);
  if (o.record_tiles && (o.trace_batch >= B || o.trace_head >= H))
    throw Error("flash: traced head (b=" + n2s(o.trace_batch) + ", h=" + n2s(o.trace_head) +
                ") is outside B=" + n2s(B) + ", h=" + n2s(H));
  const int64_t limit = o.mem_limit > 0 ? o.mem_limit : physical_limit();
  const int64_t trace_bytes = predict_flash_tile_trace_bytes(s, o);
  if (trace_bytes > limit)
    throw Error("the tile trace would hold " + human_bytes(trace_bytes) + " (" + format_count(trace_bytes) +
                " bytes), over the limit of " + human_bytes(limit) +
                "; trace one head (trace_batch/trace_head), use a shorter sequence, or do not record tiles");
  const MaskPlan plan = plan_mask(mask, B, H, Tq, Tk);

  FlashCoreResult result;
  result.out = Tensor::empty({B, H, Tq, dk});  // (B,h,Tq,dk) ctx_heads
  result.m = Tensor::empty({B, H, Tq});
  result.l = Tensor::empty({B, H, Tq});
  int threads = o.threads > 0 ? o.threads : default_threads();
  const int64_t nq = s.q_blocks(), items = B * H * nq;
  threads = static_cast<int>(std::min<int64_t>(threads, items));

  CoreArgs args{&q, &k, &v, &plan, scale, s, &o, result.out.f32(), result.m.f32(), result.l.f32()};
  std::vector<ItemResult> item_results(static_cast<size_t>(items));
  std::atomic<int64_t> next{0};
  run_workers(threads, [&](int) {  // one Worker (the fast-memory buffers) per thread
    Worker w(s.block_q, s.block_k, dk, Tk);
    for (int64_t it; (it = next.fetch_add(1)) < items;) {
      const int64_t qb = it % nq, h = (it / nq) % H, b = it / (nq * H);
      run_item(args, w, b, h, qb, item_results[static_cast<size_t>(it)]);
    }
  });

  // Gather counters and events in the sequential order (b, h, query block, key block).
  FlashStats& st = result.stats;
  st.shape = s;
  st.threads = threads;
  st.tiles_total = B * H * nq * s.k_blocks();
  st.fast_bytes = flash_fast_bytes(s.block_q, s.block_k, dk);
  const int64_t heads_bytes = 4 * B * H * (Tq + 2 * Tk) * dk;
  // The IO model's figure: the head stage (a re-laid copy of K and V, flash_stage_bytes) is
  // counted where memory is predicted and limited, not here, so tiny runs still compare
  // the tiled core's own state with S and P.
  st.core_bytes = result.out.nbytes() + result.m.nbytes() + result.l.nbytes() + threads * st.fast_bytes;
  st.standard_core_bytes = 2 * B * H * Tq * Tk * 4;
  st.io_standard = flash_io_standard(s);
  FlashIo io, io_std;
  for (ItemResult& r : item_results) {
    st.tiles_visited += r.visited;
    st.tiles_skipped += r.skipped;
    st.io.reads += r.io.reads;
    st.io.writes += r.io.writes;
    // Events only exist for traced heads; counters run over every head in order, so an item
    // with no events still advances them by its totals.
    if (r.events.empty()) {
      io.reads += r.io.reads, io.writes += r.io.writes;
      io_std.reads += r.io_std.reads, io_std.writes += r.io_std.writes;
      continue;
    }
    for (size_t i = 0; i < r.events.size(); ++i) {
      io.reads += r.event_io[i].reads, io.writes += r.event_io[i].writes;
      io_std.reads += r.event_io_std[i].reads, io_std.writes += r.event_io_std[i].writes;
      FlashEvent& e = r.events[i];
      e.io = io;
      e.io_standard = io_std;
      e.held_bytes = heads_bytes + result.out.nbytes() + result.m.nbytes() + result.l.nbytes() + e.fast_bytes;
      result.events.push_back(std::move(e));
    }
  }
  return result;
}

}  // namespace attnsim
