// What differs between the desktop and the browser, behind a few calls; the panels use
// these and never ask which platform they run on.
//   platform_desktop.cpp  files are written where the user asked; Cairo draws PNG and PDF
//   platform_web.cpp      files are written to the page's memory and handed over as
//                         downloads; no Cairo (PNG comes from the WebGL canvas, no PDF)
#pragma once

#include <string>
#include <vector>

namespace attnsim::figure {
struct Figure;
}

namespace attnsim::app {

// Where an export named `name` is written before it is delivered: `name` in the working folder
// as a full path on the desktop (what the app then shows, with a button to open the folder), a
// scratch file in the browser.
std::string export_path(const std::string& name);
// Whether a delivered export stays in a folder the learner can open (the desktop), rather than
// becoming the browser's download.
bool exports_stay_in_folder();
// Opens the folder holding `path` in the desktop's file manager (xdg-open, not waited for);
// false with `error` where there is none to open (the browser, no xdg-open).
bool open_folder_of(const std::string& path, std::string* error);
// Hands a written export to the user: nothing to do on the desktop; in the browser the file
// becomes a download and the scratch copy is removed. False with `error` when it cannot.
bool deliver_export(const std::string& path, std::string* error);
// Figures to PNG and PDF through Cairo (figure/cairo_sink.h); without it (the browser) a
// slide's PNG is rendered by the GL capture and PDF is not offered.
bool platform_has_cairo();
// Every banner the app shows, also where a script can read it: the browser's console
// ("attnsim banner: error: TEXT"); nothing on the desktop (its errors go to stderr already).
void note_banner(const std::string& text, bool error);
// A figure as "png" or "pdf" through Cairo; false with `error` where there is no Cairo.
bool write_cairo_figure(const figure::Figure& f, const std::string& extension, const std::string& path, int width,
                        std::string* error);
// Pages as one PDF deck through Cairo; false with `error` where there is no Cairo.
bool write_cairo_deck(const std::vector<figure::Figure>& pages, const std::string& path, const std::string& title,
                      std::string* error);

}  // namespace attnsim::app
