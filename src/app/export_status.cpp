// Where exports went, and the lesson deck made on a worker. See export_status.h.
#include "app/export_status.h"

#include <imgui.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "app/app.h"
#include "app/lesson_ui.h"
#include "app/platform.h"
#include "views/i18n.h"
#include "views/slide_scenes.h"
#include "views/tasks.h"
#include "engine/error.h"
#include "lessons/lesson.h"

namespace attnsim::app {

namespace fs = std::filesystem;

namespace {

struct Note {
  std::string path;  // empty: none shown
};

// The deck being made: the worker writes the progress, the frame reads it.
struct DeckJob {
  Task<std::string> task;  // the written file's path
  std::shared_ptr<std::atomic<int>> done = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::atomic<int>> total = std::make_shared<std::atomic<int>>(0);  // 0: figures not ready
  std::string title;
  std::chrono::steady_clock::time_point started;
};

Note& note() {
  static Note n;
  return n;
}

DeckJob& job() {
  static DeckJob j;
  return j;
}

// The id a lesson file declares (`id = "..."`), read without loading the lesson.
std::string file_lesson_id(const std::string& path) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("id", 0) != 0) continue;
    const size_t a = line.find('"'), b = line.find('"', a + 1);
    if (line.find('=') < a && a != std::string::npos && b != std::string::npos) return line.substr(a + 1, b - a - 1);
  }
  return "";
}

// The file of the lesson open now: the window's --lesson FILE, or the lessons folder's file with
// that id. "" when no lesson is open or its file is not found.
std::string lesson_file_on_screen(const App& app, std::string* id) {
  int step = 0;
  if (!lesson_position(id, &step)) return "";
  std::error_code ec;
  if (!app.options.lesson.empty() && fs::is_regular_file(app.options.lesson, ec) &&
      file_lesson_id(app.options.lesson) == *id)
    return app.options.lesson;
  const std::string dir = !app.options.lesson.empty() && fs::is_directory(app.options.lesson, ec)
                              ? app.options.lesson
                              : lessons::default_lesson_dir();
  if (dir.empty()) return "";
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".toml" && file_lesson_id(e.path().string()) == *id) return e.path().string();
  return "";
}

}  // namespace

void note_export(App& app, const std::string& path) {
  if (!exports_stay_in_folder()) {  // the page: a download, named in the banner
    app.show_banner(std::string(tr("Saved")) + ": " + path.substr(path.rfind('/') + 1), false);
    return;
  }
  note().path = path;
}

void note_export_failed(App& app, const std::string& error) {
  app.show_banner(std::string(tr("Export failed")) + ": " + error, true, 8.0);
}

bool lesson_deck_busy() { return job().task.valid(); }

bool start_lesson_deck(App& app, const std::string& path, const std::string& lang) {
  DeckJob& j = job();
  if (j.task.valid()) {
    app.show_banner(tr("A deck is being made already"), true);
    return false;
  }
  const std::string id = file_lesson_id(path);
  const std::string out = export_path((id.empty() ? std::string("lesson") : id) + "-" + lang + ".pdf");
  j.done->store(0);
  j.total->store(0);
  j.title = id;
  j.started = std::chrono::steady_clock::now();
  j.task = start_task([path, lang, out, theme = app.slide_theme, done = j.done, total = j.total] {
    // The lesson read afresh with every figure computed (the window's copy may still be
    // filling in), then page by page: the same deck as --export-slides.
    const auto loaded = lessons::load_lesson(path);
    if (!loaded.lesson) throw Error("cannot read lesson " + path + " (check it with attnsim-cli lesson check)");
    const Deck deck = lesson_deck(*loaded.lesson, lessons::parse_lang(lang), theme, [&](size_t d, size_t n) {
      done->store(static_cast<int>(d));
      total->store(static_cast<int>(n));
    });
    std::vector<figure::Figure> pages;
    for (const DeckPage& p : deck.pages) pages.push_back(p.figure);
    std::string error;
    if (!write_cairo_deck(pages, out, deck.title, &error) || !deliver_export(out, &error)) throw Error(error);
    return out;
  });
  return true;
}

void lesson_deck_menu_item(App& app) {
  const char* label = tr("Export lesson as PDF deck…");
  std::string id;
  const std::string path = platform_has_cairo() ? lesson_file_on_screen(app, &id) : "";
  std::string why;
  if (!platform_has_cairo())
    why = tr("PDF needs Cairo, which only the desktop app has: attnsim --lesson FILE --export-slides DIR --format pdf");
  else if (job().task.valid())
    why = tr("A deck is being made already");
  else if (path.empty())
    why = tr("Open a lesson first (Lessons menu)");
  if (!why.empty()) {
    ImGui::MenuItem(label, nullptr, false, false);
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", why.c_str());
    return;
  }
  if (ImGui::MenuItem(label)) start_lesson_deck(app, path, ui_lang() == Lang::Ko ? "ko" : "en");
}

void panel_export_status(App& app) {
  DeckJob& j = job();
  if (j.task.valid() && j.task.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try {
      note_export(app, j.task.get());
    } catch (const std::exception& e) {  // Error: a lesson or file refused; anything else: the worker failed
      note_export_failed(app, e.what());
    }
    j.task = {};
  }
  const bool busy = j.task.valid();
  if (!busy && note().path.empty()) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos({vp->WorkPos.x + vp->WorkSize.x - 12, vp->WorkPos.y + vp->WorkSize.y - 12}, ImGuiCond_Always,
                          {1, 1});
  ImGui::SetNextWindowSizeConstraints({0, 0}, {vp->WorkSize.x * 0.6f, vp->WorkSize.y * 0.5f});
  // Opaque, over whatever panel is under it (panels draw no background of their own).
  ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_PopupBg);
  bg.w = 1;
  ImGui::PushStyleColor(ImGuiCol_WindowBg, bg);
  ImGui::Begin("##export_status", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav);
  if (busy) {
    const int done = j.done->load(), total = j.total->load();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - j.started).count();
    ImGui::TextUnformatted(trf("Making the PDF deck of %s", j.title.c_str()).c_str());
    if (total == 0) {  // the lesson's figures first: no count to show, the time so far
      ImGui::TextDisabled("%s… %.0f s", tr("computing the lesson's figures"), s);
      ImGui::ProgressBar(static_cast<float>(std::fmod(s, 1.0)), {320, 0}, "");
    } else {
      const std::string overlay = trf("step %d of %d", done, total);
      ImGui::ProgressBar(static_cast<float>(done) / static_cast<float>(total), {320, 0}, overlay.c_str());
    }
  } else {
    // The full path, whole, and the way to it: the file is never left somewhere unsaid.
    ImGui::TextUnformatted(tr("Saved"));
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + std::max(320.0f, vp->WorkSize.x * 0.5f));
    ImGui::TextUnformatted(note().path.c_str());
    ImGui::PopTextWrapPos();
    if (ImGui::Button(tr("Open folder"))) {
      std::string error;
      if (!open_folder_of(note().path, &error)) app.show_banner(error, true, 8.0);
    }
    ImGui::SameLine();
    if (ImGui::Button(tr("Copy path"))) ImGui::SetClipboardText(note().path.c_str());
    ImGui::SameLine();
    if (ImGui::Button(tr("Close"))) note().path.clear();
  }
  ImGui::End();
  ImGui::PopStyleColor();
}

}  // namespace attnsim::app
