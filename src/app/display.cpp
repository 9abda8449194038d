// Displays and their cache. See display.h.
#include "app/display.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "figure/tensor_figure.h"

namespace attnsim::app {

float Display::value(int64_t element) const {
  const Place& p = layout.places[static_cast<size_t>(element)];
  const Block& b = layout.blocks[static_cast<size_t>(p.block)];
  return atlas[static_cast<size_t>((b.atlas_row + p.row) * layout.atlas_cols + p.col)];
}

GLuint Display::colours_in_range(float range_lo, float range_hi) const {
  auto it = recoloured_.find({range_lo, range_hi});
  if (it == recoloured_.end())
    it = recoloured_
             .emplace(std::make_pair(range_lo, range_hi),
                      heatmap_renderer().colourize(texture, layout.atlas_cols, layout.atlas_rows,
                                                   map, {{0, std::max<int64_t>(layout.atlas_rows, 1),
                                                          range_lo, range_hi}}))
             .first;
  return it->second.id();
}

void compute_ranges(Display& d) {
  const float inf = std::numeric_limits<float>::infinity();
  d.lo = inf;
  d.hi = -inf;
  d.nan = d.neginf = d.posinf = 0;
  d.block_range.assign(d.layout.blocks.size(), {inf, -inf});
  for (size_t e = 0; e < d.layout.places.size(); ++e) {
    const float v = d.value(static_cast<int64_t>(e));
    if (std::isnan(v)) { ++d.nan; continue; }
    if (std::isinf(v)) { ++(v < 0 ? d.neginf : d.posinf); continue; }
    auto& r = d.block_range[static_cast<size_t>(d.layout.places[e].block)];
    r[0] = std::min(r[0], v);
    r[1] = std::max(r[1], v);
    d.lo = std::min(d.lo, v);
    d.hi = std::max(d.hi, v);
  }
  if (d.lo > d.hi) d.lo = d.hi = 0;
  for (auto& r : d.block_range)
    if (r[0] > r[1]) r = {d.lo, d.hi};
  if (d.map == figure::ColorMapId::Viridis || d.map == figure::ColorMapId::Cividis) {
    // Probabilities: 0 is the floor of the scale, so a small maximum still reads as small.
    d.lo = 0;
    for (auto& r : d.block_range) r[0] = 0;
  }
}

void upload(Display& d) {
  const Layout& l = d.layout;
  d.texture = AtlasTexture(d.atlas, l.atlas_cols, l.atlas_rows);
  std::vector<ColourBand> shared, per_head;
  shared.push_back({0, std::max<int64_t>(l.atlas_rows, 1), d.lo, d.hi});
  for (size_t i = 0; i < l.blocks.size(); ++i)
    per_head.push_back({l.blocks[i].atlas_row, l.blocks[i].rows, d.block_range[i][0],
                        d.block_range[i][1]});
  if (per_head.empty()) per_head = shared;
  d.colours = heatmap_renderer().colourize(d.texture, l.atlas_cols, l.atlas_rows, d.map, shared);
  d.colours_per_head =
      heatmap_renderer().colourize(d.texture, l.atlas_cols, l.atlas_rows, d.map, per_head);
}

const Display& DisplayCache::get(uint64_t generation, int run, const Step& step, int64_t batch,
                                 LayoutKind kind) {
  drop_except(generation);
  const std::string key = std::to_string(run) + "|" + step.name + "|" + std::to_string(batch) +
                          "|" + layout_kind_name(kind);
  auto& slot = displays_[key];
  if (!slot) {
    auto d = std::make_unique<Display>();
    d->step = step.name;
    d->map = figure::map_for_step(step.name);
    if (step.out.defined()) {
      d->layout = make_layout(kind, step.out, batch);
      d->strides = step.out.strides();
      d->offset = step.out.offset();
      d->batch = batch;
      d->atlas = atlas_values(d->layout, step.out);
    }
    compute_ranges(*d);
    upload(*d);
    slot = std::move(d);
  }
  return *slot;
}

const std::vector<Segment>& DisplayCache::segments(const Display& a, const Display& b,
                                                   bool by_storage) {
  const std::string key = std::to_string(reinterpret_cast<uintptr_t>(&a)) + ">" +
                          std::to_string(reinterpret_cast<uintptr_t>(&b)) +
                          (by_storage ? "s" : "i");
  auto it = segments_.find(key);
  if (it == segments_.end())
    it = segments_
             .emplace(key, by_storage ? match_by_storage(a.layout, b.layout)
                                      : match_by_index(a.layout, b.layout))
             .first;
  return it->second;
}

void DisplayCache::drop_except(uint64_t generation) {
  if (generation == generation_) return;
  displays_.clear();
  segments_.clear();
  generation_ = generation;
}

}  // namespace attnsim::app
