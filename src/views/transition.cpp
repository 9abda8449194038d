// Transitions: matching elements between layouts. See transition.h.
#include "views/transition.h"

#include <algorithm>

namespace attnsim::app {

const char* transition_kind_name(TransitionKind kind) {
  switch (kind) {
    case TransitionKind::Appear: return "appear";
    case TransitionKind::Rearrange: return "rearrange";
    case TransitionKind::Copy: return "copy";
    case TransitionKind::Elementwise: return "elementwise";
    case TransitionKind::Product: return "product";
  }
  return "?";
}

TransitionKind transition_kind(const Step* from, const Step& to) {
  if (!from || from->skipped() || to.skipped() || to.kind == StepKind::Input || to.name == "mask")
    return TransitionKind::Appear;
  if (to.kind == StepKind::View) return TransitionKind::Rearrange;
  if (to.kind == StepKind::Copy) return TransitionKind::Copy;
  // Ops are named "linear W_O", "matmul q·kᵀ", ...: the first word is the kind of op.
  const bool product = to.op.rfind("linear", 0) == 0 || to.op.rfind("matmul", 0) == 0;
  if (!product && from->out.defined() && to.out.defined() && from->out.shape() == to.out.shape())
    return TransitionKind::Elementwise;
  return TransitionKind::Product;
}

namespace {

// Merges element pairs (to element e, from element f), visited in the to layout's C order,
// into runs that are horizontal and adjacent in both layouts.
class SegmentBuilder {
 public:
  SegmentBuilder(const Layout& from, const Layout& to) : from_(from), to_(to) {}

  void add(int64_t to_e, int64_t from_e) {
    const Place& tp = to_.places[static_cast<size_t>(to_e)];
    const Place& fp = from_.places[static_cast<size_t>(from_e)];
    const Block& tb = to_.blocks[static_cast<size_t>(tp.block)];
    const Block& fb = from_.blocks[static_cast<size_t>(fp.block)];
    const auto to_row = static_cast<int32_t>(tb.atlas_row + tp.row);
    const auto from_row = static_cast<int32_t>(fb.atlas_row + fp.row);
    if (!out_.empty()) {
      Segment& s = out_.back();
      if (s.to_row == to_row && s.to_col + s.length == tp.col && s.from_row == from_row &&
          s.from_col + s.length == fp.col) {
        ++s.length;
        s.to.w += 1.0f;
        s.from.w += 1.0f;
        return;
      }
    }
    Segment s;
    s.from = from_.rect(from_e);
    s.to = to_.rect(to_e);
    s.from_row = from_row;
    s.from_col = fp.col;
    s.to_row = to_row;
    s.to_col = tp.col;
    out_.push_back(s);
  }

  std::vector<Segment> take() { return std::move(out_); }

 private:
  const Layout& from_;
  const Layout& to_;
  std::vector<Segment> out_;
};

}  // namespace

std::vector<Segment> match_by_storage(const Layout& from, const Layout& to) {
  SegmentBuilder builder(from, to);
  if (from.storage.empty()) return builder.take();
  // storage index -> from element, over the slice's storage span (a flat table: the
  // article's slices have 65536 elements and this runs whenever a step is first shown)
  const auto [lo, hi] = std::minmax_element(from.storage.begin(), from.storage.end());
  const int64_t base = *lo;
  std::vector<int64_t> by_storage(static_cast<size_t>(*hi - base + 1), -1);
  for (size_t e = 0; e < from.storage.size(); ++e) {
    int64_t& slot = by_storage[static_cast<size_t>(from.storage[e] - base)];
    if (slot < 0) slot = static_cast<int64_t>(e);
  }
  for (size_t e = 0; e < to.storage.size(); ++e) {
    const int64_t s = to.storage[e] - base;
    if (s < 0 || s >= static_cast<int64_t>(by_storage.size())) continue;
    const int64_t f = by_storage[static_cast<size_t>(s)];
    if (f >= 0) builder.add(static_cast<int64_t>(e), f);
  }
  return builder.take();
}

std::vector<Segment> match_by_index(const Layout& from, const Layout& to) {
  SegmentBuilder builder(from, to);
  const int64_t n = std::min(from.numel(), to.numel());
  for (int64_t e = 0; e < n; ++e) builder.add(e, e);
  return builder.take();
}

float ease(float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  return t * t * (3.0f - 2.0f * t);
}

Rect lerp(const Rect& a, const Rect& b, float t) {
  return {a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.w + (b.w - a.w) * t,
          a.h + (b.h - a.h) * t};
}

float reveal(int64_t row, int64_t col, int64_t rows, int64_t cols, float t, bool by_column) {
  const int64_t lines = by_column ? cols : rows;
  const int64_t line = by_column ? col : row;
  if (lines <= 0) return 1.0f;
  // Each line forms over `span` of t; starts are spread so the last line ends at t = 1 and
  // neighbouring lines overlap, which reads as a sweep.
  const float share = 1.0f / static_cast<float>(lines);
  const float span = std::min(1.0f, 2.5f * share + 0.1f);
  const float start = static_cast<float>(line) * share * (1.0f - span);
  return std::clamp((t - start) / span, 0.0f, 1.0f);
}

}  // namespace attnsim::app
