// Trace: the ordered, named record of one forward pass.
//
// Step names are the public interface (like hook points): the app's panel labels, the
// .npy dump file names, lessons and tests all use exactly these strings.
//
//   query key value             inputs (B,Tq,d) (B,Tk,d) (B,Tk,d); self-attention: one tensor
//   q_proj k_proj v_proj        x·Wᵀ + b                     (B,T,d)        new storage
//   q_view k_view v_view        .view(B,T,h,dk)              (B,T,h,dk)     view
//   q_heads k_heads v_heads     .transpose(1,2)              (B,h,T,dk)     view, not contiguous
//                               (k/v: (B,g,T,dk) with g = kv_heads)
//   q_rot k_rot                 rotary embedding (RoPE)      (B,h,T,dk)     new storage; skipped
//                               at positions p0..p0+T-1      (B,g,T,dk)     without RoPE
//   k_cache_append              k_heads written into the     (B,g,n,dk)     copy into the cache's
//   v_cache_append                preallocated cache slots                  storage (decode only)
//   k_cache v_cache             the filled part of the cache (B,g,t,dk)     view (narrow)
//   k_grouped v_grouped         .unsqueeze(2).expand(..)     (B,g,h/g,T,dk) view, stride 0 on h/g
//                               (repeat_interleave variant:  (B,h,T,dk)     copy; only when g < h)
//   scores                      q_heads·k_headsᵀ             (B,h,Tq,Tk)    new storage
//   scores_scaled               scores / sqrt(dk)            (B,h,Tq,Tk)    new storage
//   mask                        bool, true = hidden          (B,1,Tq,Tk)    broadcast over h
//   scores_masked               masked_fill(mask, -inf)      (B,h,Tq,Tk)    new storage
//   alpha                       softmax(dim=-1)              (B,h,Tq,Tk)    new storage
//   alpha_dropped               dropout (train mode only)    (B,h,Tq,Tk)    new storage
//   ctx_heads                   alpha·v_heads                (B,h,Tq,dk)    new storage
//   ctx_transposed              .transpose(1,2)              (B,Tq,h,dk)    view, not contiguous
//   ctx_contiguous              .contiguous()                (B,Tq,h,dk)    copy
//   ctx_concat                  .view(B,Tq,d)                (B,Tq,d)       view
//   out                         ctx_concat·W_Oᵀ + b          (B,Tq,d)       new storage
// A step that does not apply (no mask, eval-mode dropout) is still listed, marked skipped.
// Two groups of steps appear only where they exist: the cache steps in a decode step's trace,
// the grouped steps when g < h. A plain forward with g == h lists 25 steps (q_rot and k_rot skipped without RoPE).
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "tensor.h"

namespace attnsim {

inline constexpr std::array<const char*, 31> kStepNames = {
    "query",   "key",           "value",         "q_proj",         "k_proj",
    "v_proj",  "q_view",        "k_view",        "v_view",         "q_heads",
    "k_heads", "v_heads",       "q_rot",         "k_rot",
    "k_cache_append", "v_cache_append", "k_cache",
    "v_cache", "k_grouped",     "v_grouped",     "scores",         "scores_scaled",
    "mask",    "scores_masked", "alpha",         "alpha_dropped",  "ctx_heads",
    "ctx_transposed", "ctx_contiguous", "ctx_concat", "out"};

bool is_step_name(const std::string& name);

// The names a trace of this kind lists, in kStepNames order: `grouped` when g < h, `cached`
// for a decode step (prefill or one token). forward() with g == h gives 25: DESIGN.md's 23 and q_rot, k_rot.
std::vector<std::string> trace_step_names(bool grouped, bool cached);

// Counts over a float tensor's logical elements.
struct NonFinite {
  int64_t nan = 0, neginf = 0, posinf = 0;
};
NonFinite count_nonfinite(const Tensor& t);
// Adds the counts of p[0..n) to c (for ops that count their output while it is in cache).
void count_nonfinite_into(const float* p, int64_t n, NonFinite& c);

// How a step's tensor came to be.
enum class StepKind {
  Input,    // given by the caller
  View,     // same storage, new offset/shape/strides; costs no memory
  Copy,     // the same values moved into a new storage (contiguous)
  Compute,  // new values in a new storage
  Skipped,  // the step does not apply in this configuration
};
const char* step_kind_name(StepKind kind);

struct Step {
  std::string name;                 // one of kStepNames
  std::string op;                   // "linear", "view", "transpose", "matmul", ...
  std::vector<std::string> inputs;  // names of the steps it reads
  StepKind kind = StepKind::Skipped;
  Tensor out;                       // undefined when skipped
  int64_t storage_id = 0;           // trace-local: 1 for the first storage seen, ...
  int64_t new_bytes = 0;            // bytes of storage this step allocated (0 for a view)
  int64_t copied_bytes = 0;         // bytes moved by a copy (Copy steps only)
  int64_t nan_count = 0;
  int64_t neginf_count = 0;
  int64_t posinf_count = 0;
  bool counts_known = false;        // the three counts were filled in by the op itself
  std::string backend;              // "cpu", "cuda"; empty for inputs and views
  std::string note;                 // why skipped, or what a bug changed
  bool writes_existing = false;     // a Copy into a storage made earlier (the KV cache append):
                                    // it allocates nothing; copied_bytes = the bytes written

  bool skipped() const { return kind == StepKind::Skipped; }
  bool is_view() const { return kind == StepKind::View; }
};

class Trace {
 public:
  std::vector<Step> steps;
  // false: add() leaves uncounted a step whose op did not count it (its counts read 0). For a
  // pass no one reads the counts of (the trainer's forward); first_nonfinite_step then sees
  // only the steps their ops counted.
  bool count = true;

  const Step* find(const std::string& name) const;  // nullptr when absent
  const Step& at(const std::string& name) const;    // throws Error when absent
  // Appends a step, numbering its storage and counting NaN / -inf / +inf.
  void add(Step step);
  // Bytes held by every distinct storage the trace keeps alive (views cost nothing).
  int64_t held_bytes() const;
  // Name of the first step whose output contains NaN, or "" when none does.
  std::string first_nan_step() const;
  // Name of the first computed step holding NaN or ±inf, or "" when none does. -inf where
  // the mask puts it (scores_masked, and the bool mask itself) is by design and not counted.
  std::string first_nonfinite_step() const;

  // The weight tensors the projections read (shared, not copied: W_Q, b_Q, W_K, b_K, W_V,
  // b_V), so a later pass can tell whether it reads the same ones (forward's `earlier`).
  std::vector<Tensor> projection_weights;
  // The steps before the attention core were taken from an earlier trace, not computed.
  bool reused_head_steps = false;

 private:
  std::vector<int64_t> seen_storage_ids_;  // process-wide ids, in order of first appearance
  std::vector<std::pair<int64_t, NonFinite>> counted_;  // storage id -> counts of all its elements
};


}  // namespace attnsim
