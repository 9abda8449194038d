// A deck as one self-contained HTML file: every slide's SVG inline (figure/svg_sink.h: real
// <text>, Korean included), one slide per screen, ←/→ or space to move. Nothing beside it to
// lose: the app's "Export slides (HTML deck)" writes it on the desktop and downloads it in
// the browser, where there is no folder to write a deck of files into.
#pragma once

#include <string>

#include "views/slide_scenes.h"

namespace attnsim::app {

std::string deck_html(const Deck& deck, int width);

}  // namespace attnsim::app
