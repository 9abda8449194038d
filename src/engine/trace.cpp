#include "trace.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "error.h"
#include "parallel.h"

namespace attnsim {

bool is_step_name(const std::string& name) {
  return std::find(kStepNames.begin(), kStepNames.end(), name) != kStepNames.end();
}

std::vector<std::string> trace_step_names(bool grouped, bool cached) {
  std::vector<std::string> names;
  for (const char* n : kStepNames) {
    const std::string s = n;
    const bool is_cache = s == "k_cache_append" || s == "v_cache_append" || s == "k_cache" || s == "v_cache";
    const bool is_group = s == "k_grouped" || s == "v_grouped";
    if ((is_cache && !cached) || (is_group && !grouped)) continue;
    names.push_back(s);
  }
  return names;
}

const char* step_kind_name(StepKind kind) {
  switch (kind) {
    case StepKind::Input: return "input";
    case StepKind::View: return "view";
    case StepKind::Copy: return "copy";
    case StepKind::Compute: return "compute";
    case StepKind::Skipped: return "skipped";
  }
  return "?";
}

// Branch-free over the bits, so it vectorises: a masked row of -inf fills is as cheap to
// count as a row of finite values (classifying each hit with a branch cost a training step
// about 5 %). NaN: exponent all ones and a mantissa; ±inf: exactly the two infinities.
void count_nonfinite_into(const float* p, int64_t n, NonFinite& c) {
  constexpr int64_t kBlock = 1 << 16;  // 32-bit lane counters cannot overflow within a block
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t len = std::min(kBlock, n - start);
    uint32_t nan = 0, posinf = 0, neginf = 0;
    for (int64_t i = start; i < start + len; ++i) {
      uint32_t bits;
      std::memcpy(&bits, p + i, 4);
      nan += (bits & 0x7FFFFFFFu) > 0x7F800000u;
      posinf += bits == 0x7F800000u;
      neginf += bits == 0xFF800000u;
    }
    c.nan += nan, c.posinf += posinf, c.neginf += neginf;
  }
}

NonFinite count_nonfinite(const Tensor& t) {
  NonFinite c;
  if (!t.defined() || t.dtype() != DType::F32) return c;
  // A contiguous tensor or a permutation of one (a transpose, the view into heads) has its
  // elements in one block, and counts do not depend on order: large blocks in chunks on all
  // cores (the scan is memory-bound).
  if (t.is_dense()) {
    std::mutex mutex;
    parallel_for(t.numel(), int64_t{1} << 20, [&](int64_t first, int64_t last) {
      NonFinite part;
      count_nonfinite_into(t.f32() + first, last - first, part);
      std::lock_guard<std::mutex> lock(mutex);
      c.nan += part.nan, c.neginf += part.neginf, c.posinf += part.posinf;
    });
  } else {
    const float* base = t.f32() - t.offset();
    for_each_element(t, [&](int64_t, int64_t pos) { count_nonfinite_into(base + pos, 1, c); });
  }
  return c;
}

const Step* Trace::find(const std::string& name) const {
  for (const Step& s : steps)
    if (s.name == name) return &s;
  return nullptr;
}

const Step& Trace::at(const std::string& name) const {
  if (const Step* s = find(name)) return *s;
  throw Error("the trace has no step named '" + name + "'");
}

void Trace::add(Step step) {
  if (step.out.defined()) {
    const int64_t id = step.out.storage()->id;
    auto it = std::find(seen_storage_ids_.begin(), seen_storage_ids_.end(), id);
    if (it == seen_storage_ids_.end()) {
      seen_storage_ids_.push_back(id);
      it = seen_storage_ids_.end() - 1;
      if (step.kind != StepKind::Input && step.kind != StepKind::View && !step.writes_existing)
        step.new_bytes = step.out.storage()->nbytes;
    }
    step.storage_id = (it - seen_storage_ids_.begin()) + 1;
    if (step.kind == StepKind::Copy) step.copied_bytes = !step.writes_existing ? step.new_bytes
                                                 : step.copied_bytes > 0 ? step.copied_bytes  // set by the op
                                                                         : step.out.nbytes();
    // A tensor that covers every element of its storage once (any permutation view of a
    // full storage) has the storage's counts: count each storage once, not once per view.
    const Tensor& t = step.out;
    const bool covers_storage =
        t.nbytes() == t.storage()->nbytes &&
        std::none_of(t.strides().begin(), t.strides().end(), [](int64_t s) { return s == 0; });
    NonFinite c;
    auto cached = std::find_if(counted_.begin(), counted_.end(),
                               [&](const auto& e) { return e.first == id; });
    if (step.counts_known) {  // the op counted while its output was in cache
      c = {step.nan_count, step.neginf_count, step.posinf_count};
      if (covers_storage) counted_.emplace_back(id, c);
    } else if (covers_storage && cached != counted_.end()) {
      c = cached->second;
    } else if (count) {
      c = count_nonfinite(t);
      if (covers_storage) counted_.emplace_back(id, c);
    }
    step.nan_count = c.nan;
    step.neginf_count = c.neginf;
    step.posinf_count = c.posinf;
  }
  steps.push_back(std::move(step));
}

int64_t Trace::held_bytes() const {
  std::vector<const Storage*> seen;
  int64_t total = 0;
  for (const Step& s : steps) {
    if (!s.out.defined()) continue;
    const Storage* st = s.out.storage().get();
    if (std::find(seen.begin(), seen.end(), st) != seen.end()) continue;
    seen.push_back(st);
    total += st->nbytes;
  }
  return total;
}

std::string Trace::first_nan_step() const {
  for (const Step& s : steps)
    if (s.nan_count > 0) return s.name;
  return "";
}

std::string Trace::first_nonfinite_step() const {
  for (const Step& s : steps) {
    if (s.skipped() || s.name == "mask") continue;
    const int64_t neginf = s.name == "scores_masked" ? 0 : s.neginf_count;
    if (s.nan_count + s.posinf_count + neginf > 0) return s.name;
  }
  return "";
}

}  // namespace attnsim
