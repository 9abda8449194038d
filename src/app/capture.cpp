// Capture to PNG. See capture.h.
#include "app/capture.h"

#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "app/app.h"
#include "app/fonts.h"
#include "app/gl.h"
#include "app/heatmap_gl.h"
#include "app/platform.h"
#include "app/window.h"
#include "engine/atomic_file.h"
#include "engine/error.h"
#include "figure/png_encode.h"

namespace attnsim::app {

std::string export_file_name(const App& app, const ExportRequest& r) {
  const Step* s = app.current_step();
  std::string name = app.session.scenario().name + "-" + (s ? s->name : "none");
  if (r.panel != "window") name += "-" + r.panel;
  return name + "@" + std::to_string(r.scale) + "x.png";
}

bool write_png_atomic(const std::string& path, int width, int height, const unsigned char* rgba,
                      std::string* error) {
  // Encoded in memory, then written through AtomicFile: stb's own file writer checks
  // neither its writes nor fclose, so a full disk left a truncated PNG behind.
  const std::string png = figure::encode_png(width, height, rgba);
  if (png.empty()) {
    *error = path + ": could not encode the PNG";
    return false;
  }
  try {
    write_file_atomically(path, png);
  } catch (const Error& e) {
    *error = e.what();
    return false;
  }
  return true;
}

namespace {

// An RGBA8 framebuffer, freed on scope exit.
struct Offscreen {
  GLuint fbo = 0, colour = 0;
  Offscreen(int w, int h) {
    glGenTextures(1, &colour);
    glBindTexture(GL_TEXTURE_2D, colour);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, colour, 0);
  }
  bool complete() const { return glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE; }
  ~Offscreen() {
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fbo);
    glDeleteTextures(1, &colour);
  }
};

}  // namespace

bool capture_png(App& app, const ExportRequest& r, std::string* written,
                 std::string* error) {
  // named after the step in the working folder, as a full path (platform.h): the app shows it
  const std::string path = r.path.empty() ? export_path(export_file_name(app, r)) : r.path;

  // Re-run one frame with glyphs rasterised at the export scale.
  fonts().set_raster_scale(static_cast<float>(r.scale));
  fonts().rebuild_if_needed();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  // Panels have no background of their own (window.h): a transparent clear is enough.
  if (r.transparent) ImGui::PushStyleColor(ImGuiCol_MenuBarBg, ImVec4(0, 0, 0, 0));
  app_frame(app, 0.0f);
  if (r.transparent) ImGui::PopStyleColor();
  ImGui::Render();
  ImDrawData* dd = ImGui::GetDrawData();

  // The region: the whole window or the panel's rect, in logical pixels.
  ImVec4 region{dd->DisplayPos.x, dd->DisplayPos.y, dd->DisplaySize.x, dd->DisplaySize.y};
  if (r.panel != "window") {
    const auto it = app.panel_rects.find(r.panel);
    if (it == app.panel_rects.end()) {
      *error = "no panel named '" + r.panel + "' is on screen";
      fonts().set_raster_scale(1.0f);
      return false;
    }
    region = it->second;
  }
  const float scale = static_cast<float>(r.scale);
  dd->DisplayPos = {region.x, region.y};
  dd->DisplaySize = {region.z, region.w};
  dd->FramebufferScale = {scale, scale};
  const int w = static_cast<int>(region.z * scale), h = static_cast<int>(region.w * scale);
  RenderTarget& rt = render_target();
  rt.display_pos[0] = region.x;
  rt.display_pos[1] = region.y;
  rt.display_size[0] = region.z;
  rt.display_size[1] = region.w;
  rt.fb_scale[0] = rt.fb_scale[1] = scale;

  bool ok = false;
  {
    Offscreen target(w, h);
    if (!target.complete()) {
      *error = "offscreen framebuffer " + std::to_string(w) + "x" + std::to_string(h) +
               " is not supported by this OpenGL";
    } else {
      glViewport(0, 0, w, h);
      if (r.transparent) glClearColor(0, 0, 0, 0);
      else glClearColor(kClearColour[0], kClearColour[1], kClearColour[2], 1.0f);
      glClear(GL_COLOR_BUFFER_BIT);
      ImGui_ImplOpenGL3_RenderDrawData(dd);
      std::vector<unsigned char> pixels(static_cast<size_t>(w) * static_cast<size_t>(h) * 4);
      glPixelStorei(GL_PACK_ALIGNMENT, 1);
      glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
      // OpenGL's first row is the bottom one; PNG's is the top one.
      std::vector<unsigned char> flipped(pixels.size());
      const size_t row = static_cast<size_t>(w) * 4;
      for (int y = 0; y < h; ++y)
        std::memcpy(&flipped[static_cast<size_t>(y) * row], &pixels[static_cast<size_t>(h - 1 - y) * row], row);
      ok = write_png_atomic(path, w, h, flipped.data(), error);
    }
  }
  heatmap_renderer().end_frame();
  fonts().set_raster_scale(1.0f);
  fonts().rebuild_if_needed();
  if (ok) *written = path;
  return ok;
}

}  // namespace attnsim::app
