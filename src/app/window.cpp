// The window. See window.h.
#include "app/window.h"

#define GLFW_INCLUDE_NONE  // gl.h brings the core profile headers
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <cstdio>
#include <algorithm>
#include <cstdlib>

#include "app/app.h"
#include "app/fonts.h"
#include "app/gl.h"
#include "app/heatmap_gl.h"
#include "app/ui_scale.h"
#include "views/window_settings.h"

namespace attnsim::app {

namespace {

void glfw_error(int code, const char* text) {
  std::fprintf(stderr, "attnsim: GLFW error %d: %s\n", code, text);
}

}  // namespace

bool open_window(Window& w, int width, int height, bool visible, std::string* why, const WindowSettings* saved) {
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
#ifndef __EMSCRIPTEN__  // the page's canvas follows the browser window (main_web.cpp)
  int work_x = 0, work_y = 0;
  if (saved) {
    // A projector at 1280x720 must show every panel: never larger than the work area.
    int work_w = width, work_h = height;
    if (GLFWmonitor* monitor = glfwGetPrimaryMonitor()) glfwGetMonitorWorkarea(monitor, &work_x, &work_y, &work_w, &work_h);
    const WindowSize size = fit_window(*saved, work_w, work_h);
    width = size.width;
    height = size.height;
    glfwWindowHint(GLFW_MAXIMIZED, size.maximize ? GLFW_TRUE : GLFW_FALSE);
  }
#endif
  w.handle = glfwCreateWindow(width, height, "attnsim — multi-head attention", nullptr, nullptr);
  if (!w.handle) {
    *why = "could not create an OpenGL window (3.3 core; WebGL 2 in the browser)";
    glfwTerminate();
    return false;
  }
#ifndef __EMSCRIPTEN__
  if (saved) {
    // The title bar and borders come on top of the size asked for: take them off so the
    // whole frame fits the work area (a window manager that maximized it has done so).
    int left = 0, top = 0, right = 0, bottom = 0;
    glfwGetWindowFrameSize(w.handle, &left, &top, &right, &bottom);
    int cw = 0, ch = 0;
    glfwGetWindowSize(w.handle, &cw, &ch);
    if (!glfwGetWindowAttrib(w.handle, GLFW_MAXIMIZED) && (left + right > 0 || top + bottom > 0)) {
      glfwSetWindowSize(w.handle, std::max(320, cw - left - right), std::max(240, ch - top - bottom));
      glfwSetWindowPos(w.handle, work_x + left, work_y + top);
    }
  }
#endif
  glfwMakeContextCurrent(w.handle);
#ifndef __EMSCRIPTEN__  // the page's main loop runs at the display's rate (requestAnimationFrame)
  glfwSwapInterval(visible ? 1 : 0);
#endif
#ifndef __EMSCRIPTEN__
  float sx = 1, sy = 1;
  glfwGetWindowContentScale(w.handle, &sx, &sy);
  set_content_scale(sx);
#endif

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // panels are laid out by the app, not saved
  ImGui_ImplGlfw_InitForOpenGL(w.handle, true);
#ifdef __EMSCRIPTEN__
  ImGui_ImplOpenGL3_Init("#version 300 es");
#else
  ImGui_ImplOpenGL3_Init("#version 330 core");
#endif
  fonts().init(kBaseFontPx, ui_scale());
  apply_ui_scale();
  fonts().rebuild_if_needed();
  heatmap_renderer().init();
  return true;
}

void read_window_settings(const Window& w, WindowSettings* s) {
  glfwGetWindowSize(w.handle, &s->width, &s->height);
#ifndef __EMSCRIPTEN__
  s->maximized = glfwGetWindowAttrib(w.handle, GLFW_MAXIMIZED) == GLFW_TRUE;
#endif
  s->text_scale = text_scale();
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
  apply_ui_scale();
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
