// Where exports went, and the exports that take a while. Every export from the window ends in
// note_export: on the desktop a note stays on screen with the file's full path and a button
// that opens its folder (platform.h open_folder_of), until it is closed or the next export
// replaces it; in the page the file is already the browser's download, and a banner names it.
//
// File > Export lesson as PDF deck… builds the open lesson's deck (slide_scenes.h lesson_deck,
// the same pages as `attnsim --export-slides --format pdf`) on a worker: its figures computed
// afresh, then page by page, with the progress in the note; the window keeps drawing. The
// page has no Cairo, so no PDF: the item is disabled there and says why.
#pragma once

#include <string>

namespace attnsim::app {

struct App;

// An export was written to `path` (a full path on the desktop).
void note_export(App& app, const std::string& path);
// An export failed: the banner, in red, with the reason.
void note_export_failed(App& app, const std::string& error);

// The File menu's item for the lesson deck (disabled with its reason where it cannot run).
void lesson_deck_menu_item(App& app);
// Starts the deck of the lesson file `path` in `lang` ("ko" / "en") with the slide theme;
// false (and the banner) when one is being made already.
bool start_lesson_deck(App& app, const std::string& path, const std::string& lang);
// True while a deck is being made (tests wait on it).
bool lesson_deck_busy();

// Draws the note or the deck's progress, and takes a finished deck: once a frame.
void panel_export_status(App& app);

}  // namespace attnsim::app
