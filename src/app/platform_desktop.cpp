// The desktop side of platform.h: files stay where they were written.
#include "app/platform.h"

#include "figure/cairo_sink.h"

namespace attnsim::app {

std::string export_path(const std::string& name) { return name; }

bool deliver_export(const std::string&, std::string*) { return true; }

bool platform_has_cairo() { return true; }

void note_banner(const std::string&, bool) {}

bool write_cairo_figure(const figure::Figure& f, const std::string& extension, const std::string& path, int width,
                        std::string* error) {
  if (extension == "pdf") return figure::write_pdf({f}, path, f.title, error);
  return figure::write_png(f, path, width, error);
}

}  // namespace attnsim::app
