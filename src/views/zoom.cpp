// Zoom about the pointer. See zoom.h.
#include "views/zoom.h"

#include <algorithm>

namespace attnsim::app {

void zoom_about(float& zoom, float& pan_x, float& pan_y, float fit, float factor, float px,
                float py) {
  const float old_scale = fit * zoom;
  zoom = std::clamp(zoom * factor, 1.0f, kMaxZoom);
  if (zoom <= 1.0f) {
    pan_x = pan_y = 0;
    return;
  }
  const float new_scale = fit * zoom;
  // the layout point under the pointer before ...
  const float lx = (px - pan_x) / old_scale, ly = (py - pan_y) / old_scale;
  // ... is put back under it after
  pan_x = px - lx * new_scale;
  pan_y = py - ly * new_scale;
}

}  // namespace attnsim::app
