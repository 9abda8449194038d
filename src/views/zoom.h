// Zoom and pan of a heatmap view, as plain arithmetic (tested without a window).
//
// A view draws layout point (x, y) at screen  origin + pan + (x, y) · fit · zoom, where
// `fit` scales the whole layout into the view and zoom >= 1 magnifies it.
#pragma once

namespace attnsim::app {

inline constexpr float kMaxZoom = 64.0f;

// Multiplies the zoom by `factor` (clamped to [1, kMaxZoom]) so that the layout point under
// the pointer stays under it; (px, py) is the pointer relative to the view's origin. At
// zoom 1 the pan resets: the layout fits again.
void zoom_about(float& zoom, float& pan_x, float& pan_y, float fit, float factor, float px,
                float py);

}  // namespace attnsim::app
