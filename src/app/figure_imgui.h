// The on-screen sink of figures (src/figure): draws a Figure into an ImGui draw list, so the
// app's slide view shows the very description that --export writes as PNG, SVG or PDF.
// Text uses the app's NanumGothic atlas (glyphs requested through fonts().want). A heatmap
// with more cells than screen pixels is drawn averaged into one block per pixel (the files keep
// every cell); above 256 blocks it is one texture, not a rectangle per cell, kept from frame
// to frame while it shows the same values (frame_texture.h).
#pragma once

#include <imgui.h>

#include "figure/figure.h"
#include "figure/palette.h"
#include "lessons/lesson.h"

namespace attnsim::app {

// Asks the font atlas for every glyph the figure's text uses (call before the frame).
void want_figure_glyphs(const figure::Figure& f);
// Whether the figure's background is drawn. A working panel's figure sits on the window
// (Window): the panel's own background shows through, and the software rasteriser (llvmpipe)
// is spared a blended fill of the figure's whole area every frame. The slide view draws it
// (Drawn), as the exports do.
enum class Backdrop : bool { Drawn, Window };

// Draws `f` with its top-left at `origin`, `scale` screen pixels per figure unit.
void draw_figure(ImDrawList* dl, const figure::Figure& f, ImVec2 origin, float scale, Backdrop backdrop);

// No text on screen is smaller than this at 100 % (times the text size, ui_scale.h).
inline constexpr float kMinScreenTextPx = 11.0f;
// `fit`, the scale that fits `f` in its room, raised where a text of `f` would be drawn smaller
// than kMinScreenTextPx: the panel then scrolls over the figure (it reserves the figure's size
// with a Dummy) instead of shrinking a label past reading on a 1280x720 projector.
float readable_scale(const figure::Figure& f, float fit);

// The theme of the figures drawn inside working panels (memory, flash, the lesson's Figures
// table): they sit among the app's widgets, so they follow the UI's window colour
// (figure::theme_on: the dark ImGui style gives "projector"). The slide view and every export
// keep the slide theme (View > Slide theme, --theme).
const figure::Theme& panel_theme();
// The language of those figures' words: the UI's (View > Language).
lessons::Lang panel_lang();

}  // namespace attnsim::app
