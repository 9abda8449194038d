// The memory strip as a figure. See memory_figure.h.
#include "figure/memory_figure.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/error.h"
#include "figure/text_metrics.h"

namespace attnsim::figure {

namespace {

// A strip above this many cells is refused (a slide shows at most a few hundred thousand).
constexpr int64_t kMaxStripCells = int64_t{1} << 22;

}  // namespace

StripCells strip_cells(const Tensor& t, int64_t batch) {
  if (!t.defined() || t.dim() < 1 || batch < 0 || batch >= t.shape()[0])
    throw Error("memory strip: batch " + std::to_string(batch) + " is outside the tensor");
  const Tensor slice = t.narrow(0, batch, 1);
  std::vector<int64_t> pos;
  pos.reserve(static_cast<size_t>(slice.numel()));
  for_each_element(slice, [&](int64_t, int64_t p) { pos.push_back(p); });
  StripCells s;
  if (pos.empty()) return s;
  const auto [lo, hi] = std::minmax_element(pos.begin(), pos.end());
  s.base = *lo;
  const int64_t span = *hi - *lo + 1;
  if (span > kMaxStripCells) throw Error("memory strip: " + std::to_string(span) + " cells are too many to draw");
  // Only cells the tensor reads hold a value; a gap (a slice of a larger storage) stays 0.
  s.values.assign(static_cast<size_t>(span), 0.0f);
  const std::byte* bytes = t.storage()->bytes.get();
  for (int64_t p : pos) {
    const float v = t.dtype() == DType::Bool ? (reinterpret_cast<const uint8_t*>(bytes)[p] ? 1.0f : 0.0f)
                                             : reinterpret_cast<const float*>(bytes)[p];
    s.values[static_cast<size_t>(p - s.base)] = v;
    s.walk.push_back(p - s.base);
  }
  return s;
}

int64_t strip_wrap(int64_t cells, int64_t unit, const Rect& area, int strips) {
  cells = std::max<int64_t>(cells, 1);
  // Square cells: wrap w gives rows = cells / w per strip; cell = min(W / w, H / (rows·strips)).
  const double aspect = static_cast<double>(area.w) / std::max(1.0, static_cast<double>(area.h) / strips);
  int64_t wrap = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(cells) * aspect))));
  if (unit > 0 && cells % unit == 0) {
    // Whole tokens per row: the multiple of `unit` nearest the square wrap (at least one token).
    wrap = std::max<int64_t>(unit, (wrap + unit / 2) / unit * unit);
  }
  return std::min(wrap, cells);
}

Legend memory_legend(const MemorySpec& spec, const std::string& what) {
  float lo = 0, hi = 0;
  bool any = false;
  for (const Strip& s : spec.strips)
    for (float v : strip_cells(*s.tensor, s.batch).values)
      if (std::isfinite(v)) {
        lo = any ? std::min(lo, v) : v;
        hi = any ? std::max(hi, v) : v;
        any = true;
      }
  const auto ends = colormap_ends(spec.map, lo, hi);
  Legend lg;
  lg.map = spec.map;
  lg.lo = ends[0];
  lg.hi = ends[1];
  lg.what = what;
  return lg;
}

MemoryLayout add_memory_strips(Figure& f, const Theme& th, const Rect& area, const MemorySpec& spec) {
  MemoryLayout out;
  if (spec.strips.empty()) return out;
  float y = area.y + 20;
  if (!spec.headline.empty()) {
    fitted_text(f, area.x, y, spec.headline, kBodySize, area.w, th.text, Anchor::Start, false, "label");
    y += 46;
  }
  // The detail wraps to four lines (the engine's refusal of a view is one long sentence, said
  // whole: it names the way out).
  for (const auto& line : wrap_text(spec.detail, kLabelMin, area.w, 4)) {
    fitted_text(f, area.x, y, line, kLabelMin, area.w, th.accent, Anchor::Start, false, "label");
    y += 40;
  }
  if (!spec.detail.empty()) y += 4;
  std::vector<StripCells> cells;
  int64_t most = 1;
  for (const Strip& s : spec.strips) {
    cells.push_back(strip_cells(*s.tensor, s.batch));
    most = std::max<int64_t>(most, static_cast<int64_t>(cells.back().values.size()));
  }
  const int n = static_cast<int>(cells.size());
  const float name_h = 44, gap = 24;
  const Rect room{area.x, y, area.w, area.bottom() - y - static_cast<float>(n) * name_h - static_cast<float>(n - 1) * gap};
  out.wrap = strip_wrap(most, spec.unit, room, n);
  int64_t rows_total = 0;
  for (const auto& c : cells) rows_total += (static_cast<int64_t>(c.values.size()) + out.wrap - 1) / out.wrap;
  const float cell = std::max(0.5f, std::min(room.w / static_cast<float>(out.wrap),
                                             room.h / static_cast<float>(std::max<int64_t>(rows_total, 1))));
  const float strip_w = cell * static_cast<float>(out.wrap);
  const float x0 = area.x + (area.w - strip_w) / 2;
  // Strips narrower than the room leave height over: centred vertically.
  y += std::max(0.0f, (room.h - cell * static_cast<float>(rows_total)) / 2);
  const Legend lg = memory_legend(spec, "");
  // The walk: one slice of axis 1 by default (one head of (h, T, dk), one token of (T, d)).
  const Dims& shape = spec.strips.front().tensor->shape();
  const int64_t slice = shape.size() > 1 ? numel_of(Dims(shape.begin() + 1, shape.end())) / std::max<int64_t>(shape[1], 1)
                                         : most;
  int64_t walk = spec.walk > 0 ? spec.walk : std::max<int64_t>(slice, 2);
  walk = std::min<int64_t>(walk, 256);  // a longer line is a scribble
  const bool numbered = cell >= 40;
  const int64_t numbers = numbered ? std::min<int64_t>(walk, 32) : 0;

  for (int i = 0; i < n; ++i) {
    const StripCells& c = cells[static_cast<size_t>(i)];
    const int64_t count = static_cast<int64_t>(c.values.size());
    const int64_t rows = (count + out.wrap - 1) / out.wrap;
    f.text(x0, y + name_h / 2 - 4, fit_text(spec.strips[static_cast<size_t>(i)].name, kLabelMin, area.x + area.w - x0),
           kLabelMin, i + 1 == n && n > 1 ? th.highlight : th.text, Anchor::Start, true, "label");
    y += name_h;
    Heatmap h;
    h.rect = {x0, y, strip_w, cell * static_cast<float>(rows)};
    h.rows = rows;
    h.cols = out.wrap;
    h.values.assign(static_cast<size_t>(rows * out.wrap), 0.0f);
    std::copy(c.values.begin(), c.values.end(), h.values.begin());
    h.map = lg.map;
    h.lo = lg.lo;
    h.hi = lg.hi;
    h.gap = th.background;
    f.heatmap(h);
    // The unused end of the last row.
    if (count % out.wrap != 0) {
      const float used = cell * static_cast<float>(count % out.wrap);
      f.box({x0 + used, h.rect.bottom() - cell, strip_w - used, cell}, th.background);
    }
    // A copy in motion: the new strip's cells not written yet are blank.
    if (i + 1 == n && n > 1 && spec.arrived < 1) {
      const int64_t done = std::clamp<int64_t>(
          static_cast<int64_t>(std::lround(static_cast<double>(std::max(spec.arrived, 0.0f)) * static_cast<double>(count))), 0,
          count);
      const Color blank = mix(th.background, th.muted, 0.18f);
      const int64_t row = done / out.wrap, col = done % out.wrap;
      if (done < count && col > 0)
        f.box({x0 + cell * static_cast<float>(col), y + cell * static_cast<float>(row),
               cell * static_cast<float>(std::min(out.wrap, count - row * out.wrap) - col), cell},
              blank);
      // whole rows after it as one box, then the used part of a short last row
      const int64_t first_row = col > 0 ? row + 1 : row, full_rows = count / out.wrap;
      if (first_row < full_rows)
        f.box({x0, y + cell * static_cast<float>(first_row), strip_w, cell * static_cast<float>(full_rows - first_row)},
              blank);
      if (count % out.wrap != 0 && first_row <= full_rows)
        f.box({x0, y + cell * static_cast<float>(full_rows), cell * static_cast<float>(count % out.wrap), cell}, blank);
    }
    f.box(h.rect, {0, 0, 0, 0}, th.frame, 1.5f);
    out.strips.push_back(h.rect);
    out.base.push_back(c.base);
    out.cells.push_back(count);
    // The walk in logical order: a line through the centres of the first cells it visits,
    // over a wider band of background so it shows on any colour; the first cells numbered.
    auto centre = [&](int64_t cellno) {
      return std::pair<float, float>{x0 + (static_cast<float>(cellno % out.wrap) + 0.5f) * cell,
                                     y + (static_cast<float>(cellno / out.wrap) + 0.5f) * cell};
    };
    const int64_t steps = std::min<int64_t>(walk, static_cast<int64_t>(c.walk.size()));
    std::vector<int64_t> walked(c.walk.begin(), c.walk.begin() + steps);
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t e = 1; e < steps; ++e) {
        const auto [ax, ay] = centre(walked[static_cast<size_t>(e - 1)]);
        const auto [bx, by] = centre(walked[static_cast<size_t>(e)]);
        Line& l = f.line(ax, ay, bx, by, pass == 0 ? th.background : th.text, pass == 0 ? 7.0f : 3.0f);
        l.arrow = pass == 1 && e + 1 == steps;
      }
    std::vector<size_t> nums;
    for (int64_t e = 0; e < std::min<int64_t>(numbers, steps); ++e) {
      // a broadcast (stride 0) walks a cell again: its first number stays
      if (std::find(walked.begin(), walked.begin() + e, walked[static_cast<size_t>(e)]) != walked.begin() + e) continue;
      const auto [cx, cy] = centre(walked[static_cast<size_t>(e)]);
      const std::string t = std::to_string(e);
      const float w = text_width(t, kLabelMin);
      f.box({cx - w / 2 - 5, cy - 17, w + 10, 34}, mix(th.background, th.text, 0.02f), th.text, 1);
      nums.push_back(f.items.size());
      f.text(cx, cy, t, kLabelMin, th.text, Anchor::Middle, false, "label");
    }
    out.numbers.push_back(std::move(nums));
    out.walked.push_back(std::move(walked));
    y = h.rect.bottom() + gap;
  }
  return out;
}

}  // namespace attnsim::figure
