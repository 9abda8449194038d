// The window. See window.h.
#include "app/window.h"

#define GLFW_INCLUDE_NONE  // gl.h brings the core profile headers
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <cstdio>
#include <cstdlib>

#include "app/app.h"
#include "app/fonts.h"
#include "app/gl.h"
#include "app/heatmap_gl.h"

namespace attnsim::app {

namespace {

void glfw_error(int code, const char* text) {
  std::fprintf(stderr, "attnsim: GLFW error %d: %s\n", code, text);
}

void style_for_projector(float scale) {
  ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowRounding = 0;
  s.FrameRounding = 3;
  s.WindowBorderSize = 1;
  // Panels tile the window, so their background is the clear colour (kClearColour) and
  // ImGui draws none: on a software rasteriser (llvmpipe) that saves a full-screen blended
  // pass every frame. Popups, tooltips and the banner keep their own backgrounds.
  s.Colors[ImGuiCol_WindowBg] = {0, 0, 0, 0};
  s.Colors[ImGuiCol_ChildBg] = {0, 0, 0, 0};
  s.ScaleAllSizes(scale);
}

}  // namespace

bool open_window(Window& w, int width, int height, bool visible, std::string* why) {
  glfwSetErrorCallback(glfw_error);
#ifndef __EMSCRIPTEN__
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((!display || !*display) && (!wayland || !*wayland)) {
    *why = "no display (DISPLAY and WAYLAND_DISPLAY are unset)";
    return false;
  }
#endif
  if (!glfwInit()) {
    *why = "GLFW could not initialise (no usable display)";
    return false;
  }
#ifdef __EMSCRIPTEN__
  // WebGL 2 is OpenGL ES 3.0 (the canvas; -sUSE_WEBGL2 -sFULL_ES3).
  glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  // An opaque canvas with no depth or stencil buffer: nothing here uses them (exports render
  // into a framebuffer of their own, capture.cpp), and the browser's compositor need not
  // blend the canvas with the page or clear buffers nobody reads.
  glfwWindowHint(GLFW_ALPHA_BITS, 0);
  glfwWindowHint(GLFW_DEPTH_BITS, 0);
  glfwWindowHint(GLFW_STENCIL_BITS, 0);
#else
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
#endif
#ifndef __EMSCRIPTEN__  // emscripten's GLFW (3.2's API) sizes the canvas in CSS pixels
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);  // HiDPI: size in screen coordinates
#endif
  glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
  w.handle = glfwCreateWindow(width, height, "attnsim — multi-head attention", nullptr, nullptr);
  if (!w.handle) {
    *why = "could not create an OpenGL window (3.3 core; WebGL 2 in the browser)";
    glfwTerminate();
    return false;
  }
  glfwMakeContextCurrent(w.handle);
#ifndef __EMSCRIPTEN__  // the page's main loop runs at the display's rate (requestAnimationFrame)
  glfwSwapInterval(visible ? 1 : 0);
#endif
#ifndef __EMSCRIPTEN__
  float sx = 1, sy = 1;
  glfwGetWindowContentScale(w.handle, &sx, &sy);
  w.ui_scale = std::max(1.0f, sx);
#endif

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // panels are laid out by the app, not saved
  style_for_projector(w.ui_scale);
  ImGui_ImplGlfw_InitForOpenGL(w.handle, true);
#ifdef __EMSCRIPTEN__
  ImGui_ImplOpenGL3_Init("#version 300 es");
#else
  ImGui_ImplOpenGL3_Init("#version 330 core");
#endif
  fonts().init(16.0f, w.ui_scale);
  fonts().rebuild_if_needed();
  heatmap_renderer().init();
  return true;
}

void close_window(Window& w) {
  heatmap_renderer().shutdown();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(w.handle);
  glfwTerminate();
  w.handle = nullptr;
}

void render_frame(App& app, Window& w, float dt) {
  fonts().rebuild_if_needed();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  if (app.click_frames > 0) {  // --click: the pointer over app.click, the button down in the middle frame
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = app.click;
    io.MouseDown[0] = app.click_frames == 2;
    --app.click_frames;
  }
  ImGui::NewFrame();
  app_frame(app, dt);
  ImGui::Render();
  ImDrawData* dd = ImGui::GetDrawData();
  RenderTarget& rt = render_target();
  rt.display_pos[0] = dd->DisplayPos.x;
  rt.display_pos[1] = dd->DisplayPos.y;
  rt.display_size[0] = dd->DisplaySize.x;
  rt.display_size[1] = dd->DisplaySize.y;
  rt.fb_scale[0] = dd->FramebufferScale.x;
  rt.fb_scale[1] = dd->FramebufferScale.y;
  int fw = 0, fh = 0;
  glfwGetFramebufferSize(w.handle, &fw, &fh);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  glViewport(0, 0, fw, fh);
  glClearColor(kClearColour[0], kClearColour[1], kClearColour[2], 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(dd);
  heatmap_renderer().end_frame();
}

}  // namespace attnsim::app
