// Displays: a step's tensor (one batch element) laid out and uploaded as a texture, cached
// per run, plus the matched segments of a transition between two displays.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/heatmap_gl.h"
#include "views/layout.h"
#include "views/transition.h"
#include "engine/trace.h"

namespace attnsim::app {

struct Display {
  std::string step;
  Layout layout;
  std::vector<float> atlas;  // CPU copy: hover values, row sums, diffs
  AtlasTexture texture;        // values (R32F)
  AtlasTexture colours;        // colour atlas, one scale for all blocks
  AtlasTexture colours_per_head;  // colour atlas, each block (head) its own scale
  figure::ColorMapId map = figure::ColorMapId::Diverging;  // figure::map_for_step
  float lo = 0, hi = 0;                         // finite range of the slice
  std::vector<std::array<float, 2>> block_range;  // per block (per-head colour scale)
  int64_t nan = 0, neginf = 0, posinf = 0;
  // The tensor's stride rule, for the hover's "storage = offset + Σ index·stride" line;
  // empty strides for displays the app computed itself (diffs, tiles).
  Dims strides;
  int64_t offset = 0, batch = 0;
  float value(int64_t element) const;
  // The colour atlas on another display's scale (a transition keeps the source's scale, so
  // dividing by sqrt(dk) visibly fades the cells); made on first use.
  GLuint colours_in_range(float lo, float hi) const;

 private:
  mutable std::map<std::pair<float, float>, AtlasTexture> recoloured_;
};

// Keyed by (run generation, which run, step, batch, layout); dropped when the run changes.
class DisplayCache {
 public:
  // run: 0 = the run, 1 = the reference run, 2.. = free for panels.
  const Display& get(uint64_t generation, int run, const Step& step, int64_t batch,
                     LayoutKind kind);
  // Segments from `a` to `b` (storage match when they share a storage, else index match).
  const std::vector<Segment>& segments(const Display& a, const Display& b, bool by_storage);
  void drop_except(uint64_t generation);

 private:
  std::map<std::string, std::unique_ptr<Display>> displays_;
  std::map<std::string, std::vector<Segment>> segments_;
  uint64_t generation_ = 0;
};

// Fills lo/hi, block ranges and non-finite counts from d.atlas over the layout's cells.
void compute_ranges(Display& d);
// Uploads d.atlas and colours it (shared and per-head scales).
void upload(Display& d);

}  // namespace attnsim::app
