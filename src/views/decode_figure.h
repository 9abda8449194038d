// One decode call as a figure (src/figure): what the decode panel draws on screen and the
// decode slides export, one builder for both. Top to bottom inside any rectangle:
//
//   tokens     every token fed so far (this call's outlined, evicted ones struck through,
//              the induction target outlined), then the predicted next one
//   K/V cache  one layer: per KV head a K strip over a V strip, every preallocated slot
//              across (empty ones outlined), d_k down; lines to the query heads that read
//              it through the stride-0 view (k_grouped), each in its group's colour
//   flight     while `flight` < 1 the call's new K and V rows fly from their tokens into the
//              slots they land in (matched by storage index: the append view's layout against
//              the cache's), lifted off the strip; their slots stay empty until they land
//   alpha      the call's last row per query head over the slots, one block per layer asked
//              for, with the position each slot holds; the induction target outlined
//   below      paged: the block pool, block tables, free list, and the memory each layout
//              wastes; an evicting policy: the by-position plot (beside the strips where
//              there is room, else here); otherwise: this model's cache with MHA, GQA and MQA
//
// Units are the slides' (text 28 units and up); the panel scales the figure to its pixels.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "views/decode_run.h"
#include "figure/figure.h"
#include "figure/palette.h"
#include "figure/plot.h"
#include "lessons/lesson.h"

namespace attnsim::app {

struct DecodeFigureSpec {
  const DecodeRun* run = nullptr;
  size_t frame = 0;
  int64_t cache_layer = 0;               // whose K/V strips
  std::vector<int64_t> alpha_layers;     // whose alpha blocks, top to bottom (empty: cache_layer)
  float flight = 1;                      // 0..1: the new rows on their way; 1: landed
  lessons::Lang lang = lessons::Lang::En;
};

// Where the parts went (figure units), for the panel's geometry and the tests.
struct DecodeLayout {
  figure::Rect strips;                   // every group's K and V strips, every slot
  std::optional<figure::PlotLayout> plot;  // the by-position plot, when drawn
  figure::Rect plot_area;
  bool plot_beside = false;              // right of the strips (else under the alpha blocks)
  float bottom = 0;                      // the lowest y drawn
};

// The layer whose cache a slide shows: the trained model's last (its induction heads read
// it), else layer 0. Every layer's cache has the same slots and the same append.
int64_t default_cache_layer(const DecodeRun& run);

// Slot holding position p in this call, -1 when none does (evicted).
int64_t slot_of(const DecodeFrame& f, int64_t p);

// The top of the alpha colour scale: the largest weight of these layers' rows in this call
// (the slide's legend says it).
float alpha_scale(const DecodeFrame& f, const std::vector<int64_t>& layers);

// "[3, 0, 5]": a block table or the free list.
std::string bracket_list(const std::vector<int64_t>& v);

// Draws call `spec.frame` of `spec.run` inside `area`. Throws Error for a frame or layer out
// of range.
DecodeLayout add_decode_view(figure::Figure& f, const figure::Theme& theme, const figure::Rect& area,
                             const DecodeFigureSpec& spec);

}  // namespace attnsim::app
