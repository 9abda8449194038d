// Capture: the whole window or one panel to PNG at 1x, 2x or 4x. The frame is rendered
// again into an offscreen framebuffer at that scale (fonts rasterised at that size, heatmaps
// drawn by the shader at that resolution), not upscaled from the screen. Written to a
// temporary file and renamed, so a half-written PNG never appears under the final name.
#pragma once

#include <string>

namespace attnsim::app {

struct App;
struct ExportRequest;

// The default file name: "<scenario>-<step>[-<panel>]@<scale>x.png".
std::string export_file_name(const App& app, const ExportRequest& request);

// Renders and writes the PNG. On failure returns false with `error` (the app shows it in a
// banner); on success `written` is the path.
bool capture_png(App& app, const ExportRequest& request, std::string* written,
                 std::string* error);

// Writes RGBA pixels (top row first) as PNG via a temporary file and rename.
bool write_png_atomic(const std::string& path, int width, int height,
                      const unsigned char* rgba, std::string* error);

}  // namespace attnsim::app
