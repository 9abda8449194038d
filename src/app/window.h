// The window: GLFW + OpenGL 3.3 core + Dear ImGui, in phases (open, frame, close), as in
// ImGui's example main. Headless modes open the same window hidden.
#pragma once

#include <string>

struct GLFWwindow;

namespace attnsim::app {

struct App;

// The background behind every panel (panels draw no background of their own).
inline constexpr float kClearColour[3] = {0.11f, 0.12f, 0.14f};

struct Window {
  GLFWwindow* handle = nullptr;
};

// Opens the window and the ImGui context. False (and `why`) when there is no display or no
// OpenGL 3.3. A visible window with `saved` opens at the saved size when it fits the
// monitor's work area, else fills the work area (window_settings.h: fit_window); headless
// windows (saved == nullptr) are exactly width x height.
struct WindowSettings;
bool open_window(Window& w, int width, int height, bool visible, std::string* why,
                 const WindowSettings* saved = nullptr);
// The window's size and state now, for the settings file.
void read_window_settings(const Window& w, WindowSettings* s);
void close_window(Window& w);

// One frame to the window: inputs, app_frame, render. Does not swap.
void render_frame(App& app, Window& w, float dt);

}  // namespace attnsim::app
