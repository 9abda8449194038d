// The browser side of platform.h: exports are written to the page's memory file system and
// handed over as downloads (a Blob and an <a download>, the way a page saves a file).
#include "app/platform.h"

#include <emscripten.h>

#include <cstdio>

namespace attnsim::app {

std::string export_path(const std::string& name) {
  EM_ASM({ FS.mkdirTree("/exports"); });
  return "/exports/" + name;
}

bool deliver_export(const std::string& path, std::string* error) {
  const int ok = EM_ASM_INT(
      {
        try {
          var path = UTF8ToString($0);
          var bytes = FS.readFile(path);
          var name = path.substring(path.lastIndexOf("/") + 1);
          var type = name.endsWith(".svg") ? "image/svg+xml" : name.endsWith(".png") ? "image/png"
                   : name.endsWith(".zip") ? "application/zip" : "application/octet-stream";
          var url = URL.createObjectURL(new Blob([bytes], {type: type}));
          var a = document.createElement("a");
          a.href = url;
          a.download = name;
          document.body.appendChild(a);
          a.click();
          a.remove();
          setTimeout(function() { URL.revokeObjectURL(url); }, 60000);
          FS.unlink(path);
          return 1;
        } catch (e) {
          console.warn("attnsim: download failed: " + e);
          return 0;
        }
      },
      path.c_str());
  if (!ok && error) *error = path + ": the browser refused the download";
  return ok != 0;
}

bool exports_stay_in_folder() { return false; }

bool open_folder_of(const std::string&, std::string* error) {
  if (error) *error = "the page's exports are downloads: the browser shows where they went";
  return false;
}

bool platform_has_cairo() { return false; }

void note_banner(const std::string& text, bool error) {
  std::printf("attnsim banner: %s: %s\n", error ? "error" : "info", text.c_str());
}

bool write_cairo_figure(const figure::Figure&, const std::string& extension, const std::string&, int,
                        std::string* error) {
  if (error) *error = extension + " figures need Cairo, which only the desktop app has";
  return false;
}

bool write_cairo_deck(const std::vector<figure::Figure>&, const std::string&, const std::string&, std::string* error) {
  if (error) *error = "a PDF deck needs Cairo, which only the desktop app has";
  return false;
}

}  // namespace attnsim::app
