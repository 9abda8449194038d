// The page's packed weight product (packed_weights_simd128.cpp): the panel layout and the
// tile loops, written once over a four-lane vector type L so the native tests run the very
// same tiling with plain floats (tests/test_packed_tile.cpp) as the page runs with SIMD128.
//
// Layout: a weight W (out,in), as torch.nn.Linear holds it, becomes ceil(out/8) panels of 8
// output columns; panel p holds, for each input k, the 8 weights of its columns side by side:
//   panels[(p·in + k)·8 + j] = W[8p + j][k]          (0 past the last column)
// so a tile reads its panel front to back, two vectors per k, never striding across W.
//
// Loops: y (m,out) = x (m,in) · Wᵀ + bias, panel by panel; over each panel (24 KB at in 768,
// in L1 or L2) pass the tiles of 4 rows of x. A tile's 4×8 sums live in 8 vectors and each
// input k adds x[r][k]·W[c][k] to them in order, so y[r][c] = bias[c] + Σ_k x[r][k]·W[c][k]
// summed in k order, mul then add (no FMA): the bits of the plain loop, whatever the vector
// type. The last 1-3 rows (a decode step's one row) would leave one sum chain per vector, each
// add waiting for the last: their tiles take 2 or 4 panels at once instead, 8 sums again.
// (Blocking the inputs so a panel's block stays in L1 measured no faster in node's V8.)
//
// L provides: reg, load(p) / store(p, v) (4 floats, any alignment), splat(p) (*p in every
// lane), mul(a, b), add(a, b).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace attnsim::packed {

constexpr int64_t kPanel = 8;     // output columns per panel: two vectors
constexpr int64_t kTileRows = 4;  // rows of x per tile of one panel: 4×2 accumulators

inline int64_t panel_count(int64_t out) { return (out + kPanel - 1) / kPanel; }
inline int64_t packed_floats(int64_t out, int64_t in) { return panel_count(out) * kPanel * in; }

// panels (packed_floats(out, in)) <- w (out,in) row-major, in the layout above.
inline void pack_panels(const float* w, int64_t out, int64_t in, float* panels) {
  for (int64_t p = 0; p < panel_count(out); ++p) {
    float* panel = panels + p * in * kPanel;
    for (int64_t j = 0; j < kPanel; ++j) {
      const int64_t c = p * kPanel + j;
      for (int64_t k = 0; k < in; ++k) panel[k * kPanel + j] = c < out ? w[c * in + k] : 0.0f;
    }
  }
}

// One tile: rows [0,R) of y, the 8·P columns of P adjacent panels (the first `cols` of them
// only, cols < 8 with P = 1 for a last panel that is short) = bias8 + x (R, in) · panels.
// bias8: the tile's columns of the bias, zeros past `cols` (or all zeros without a bias).
template <class L, int R, int P>
void tile(const float* x, int64_t in, const float* panel, float* y, int64_t ldy, int64_t cols, const float* bias8) {
  using reg = typename L::reg;
  reg acc[R][2 * P];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < 2 * P; ++v) acc[r][v] = L::load(bias8 + 4 * v);
  for (int64_t k = 0; k < in; ++k) {
    reg w[2 * P];
    for (int q = 0; q < P; ++q) {
      w[2 * q] = L::load(panel + (q * in + k) * kPanel);
      w[2 * q + 1] = L::load(panel + (q * in + k) * kPanel + 4);
    }
    for (int r = 0; r < R; ++r) {
      const reg a = L::splat(x + r * in + k);
      for (int v = 0; v < 2 * P; ++v) acc[r][v] = L::add(acc[r][v], L::mul(a, w[v]));
    }
  }
  for (int r = 0; r < R; ++r) {
    if (cols < kPanel * P) {  // a short last panel (P = 1): through a padded row
      float edge[kPanel];
      L::store(edge, acc[r][0]);
      L::store(edge + 4, acc[r][1]);
      std::memcpy(y + r * ldy, edge, cols * sizeof(float));
      continue;
    }
    for (int v = 0; v < 2 * P; ++v) L::store(y + r * ldy + 4 * v, acc[r][v]);
  }
}

// Rows [r0, r0 + R) of y, columns of panels [first, last), P panels a tile while P fit and
// one at a time after.
template <class L, int R, int P>
void row_tiles(const float* panels, int64_t out, int64_t in, const float* x, int64_t r0, const float* bias, float* y,
               int64_t first, int64_t last) {
  for (int64_t p = first; p < last;) {
    const int64_t c0 = p * kPanel;
    const bool wide = p + P <= last && c0 + P * kPanel <= out;
    const int64_t cols = wide ? P * kPanel : std::min(kPanel, out - c0);
    float bias8[kPanel * P] = {};  // the tile's columns of the bias, zeros past them
    if (bias) std::memcpy(bias8, bias + c0, cols * sizeof(float));
    const float* xr = x + r0 * in;
    float* yr = y + r0 * out + c0;
    if (wide) tile<L, R, P>(xr, in, panels + p * in * kPanel, yr, out, cols, bias8);
    else tile<L, R, 1>(xr, in, panels + p * in * kPanel, yr, out, cols, bias8);
    p += wide ? P : 1;
  }
}

// y (m,out), columns of panels [first, last) only = x (m,in) · Wᵀ + bias (bias may be null).
// Disjoint panel ranges write disjoint columns, so threads may split a product by them.
template <class L>
void linear_panels(const float* panels, int64_t out, int64_t in, const float* x, int64_t m, const float* bias,
                   float* y, int64_t first, int64_t last) {
  const int64_t whole = m / kTileRows * kTileRows;
  for (int64_t p = first; p < last; ++p)  // a panel stays in cache while every 4-row tile passes
    for (int64_t r = 0; r < whole; r += kTileRows) row_tiles<L, 4, 1>(panels, out, in, x, r, bias, y, p, p + 1);
  switch (m - whole) {  // the last rows: several panels a tile, 8 sums in flight
    case 3: row_tiles<L, 3, 1>(panels, out, in, x, whole, bias, y, first, last); break;
    case 2: row_tiles<L, 2, 2>(panels, out, in, x, whole, bias, y, first, last); break;
    case 1: row_tiles<L, 1, 4>(panels, out, in, x, whole, bias, y, first, last); break;
    default: break;
  }
}

}  // namespace attnsim::packed
