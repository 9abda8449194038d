// Text measurement through Cairo's font engine. See text_metrics.h.
#include "figure/text_metrics.h"

#include <cairo.h>

#include <cstring>
#include <map>
#include <utility>

namespace attnsim::figure {

namespace {

// One scratch context per thread; widths are measured at 100 units and scaled (Cairo's
// outlines scale linearly; hinting is off so the PNG and the PDF agree).
struct Measurer {
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t* cr = cairo_create(surface);
  std::map<std::pair<std::string, bool>, double> cache;
  Measurer() {
    cairo_font_options_t* o = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(o, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(o, CAIRO_HINT_STYLE_NONE);
    cairo_set_font_options(cr, o);
    cairo_font_options_destroy(o);
    cairo_set_font_size(cr, 100.0);
  }
  ~Measurer() {
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
  }
};

}  // namespace

std::string font_safe(const std::string& text) {
  static const std::pair<const char*, const char*> kSwaps[] = {{"ᵀ", "^T"}, {"−", "-"}};
  std::string s = text;
  for (const auto& [from, to] : kSwaps)
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + std::strlen(to)))
      s.replace(at, std::strlen(from), to);
  return s;
}

float text_width(const std::string& raw, float size, bool bold) {
  thread_local Measurer m;
  const std::string text = font_safe(raw);
  auto key = std::make_pair(text, bold);
  auto it = m.cache.find(key);
  if (it == m.cache.end()) {
    cairo_select_font_face(m.cr, kFontFamily, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_text_extents_t e;
    cairo_text_extents(m.cr, text.c_str(), &e);
    it = m.cache.emplace(std::move(key), e.x_advance).first;
  }
  return static_cast<float>(it->second * size / 100.0);
}

std::string summarize_labels(const std::vector<std::string>& labels, const std::string& noun) {
  std::string s = std::to_string(labels.size()) + " " + noun;
  if (labels.empty()) return s;
  s += ": " + labels.front();
  if (labels.size() > 2) s += " …";
  if (labels.size() > 1) s += " " + labels.back();
  return s;
}

}  // namespace attnsim::figure
