// The desktop side of platform.h: files stay where they were written.
#include "app/platform.h"

#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <thread>

#include "figure/cairo_sink.h"

extern char** environ;

namespace attnsim::app {

std::string export_path(const std::string& name) {
  std::error_code ec;
  const std::filesystem::path full = std::filesystem::absolute(name, ec);
  return ec ? name : full.lexically_normal().string();
}

bool exports_stay_in_folder() { return true; }

bool open_folder_of(const std::string& path, std::string* error) {
  std::error_code ec;
  const std::string dir = std::filesystem::absolute(path, ec).parent_path().string();
  if (ec || dir.empty()) {
    if (error) *error = path + ": no folder to open";
    return false;
  }
  // xdg-open hands the folder to the desktop's file manager and returns; a thread reaps it so
  // that the frame never waits and no zombie is left.
  pid_t pid = 0;
  char* argv[] = {const_cast<char*>("xdg-open"), const_cast<char*>(dir.c_str()), nullptr};
  if (posix_spawnp(&pid, "xdg-open", nullptr, nullptr, argv, environ) != 0) {
    if (error) *error = "cannot run xdg-open to open " + dir;
    return false;
  }
  std::thread([pid] {
    int status = 0;
    waitpid(pid, &status, 0);
  }).detach();
  return true;
}

bool deliver_export(const std::string&, std::string*) { return true; }

bool platform_has_cairo() { return true; }

void note_banner(const std::string&, bool) {}

bool write_cairo_figure(const figure::Figure& f, const std::string& extension, const std::string& path, int width,
                        std::string* error) {
  if (extension == "pdf") return figure::write_pdf({f}, path, f.title, error);
  return figure::write_png(f, path, width, error);
}

bool write_cairo_deck(const std::vector<figure::Figure>& pages, const std::string& path, const std::string& title,
                      std::string* error) {
  return figure::write_pdf(pages, path, title, error);
}

}  // namespace attnsim::app
