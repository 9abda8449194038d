// The Cairo sink. See cairo_sink.h.
//
// Index
//   [SECTION] marks and heatmaps
//   [SECTION] items
//   [SECTION] files
#include "figure/cairo_sink.h"

#include <cairo-pdf.h>
#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/atomic_file.h"
#include "engine/error.h"
#include "figure/palette.h"
#include "figure/text_metrics.h"

namespace attnsim::figure {

namespace {

void set_color(cairo_t* cr, Color c) { cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a); }

// [SECTION] marks and heatmaps ------------------------------------------------------------

// The pattern over a marked cell, clipped to it. Spacing follows the cell, in figure units.
void draw_mark(cairo_t* cr, const Rect& r, Mark mark, const Theme& theme) {
  set_color(cr, mark_fill(theme, mark));
  cairo_rectangle(cr, r.x, r.y, r.w, r.h);
  cairo_fill(cr);
  const double step = std::clamp(std::min(r.w, r.h) / 3.0, 3.0, 14.0);
  cairo_save(cr);
  cairo_rectangle(cr, r.x, r.y, r.w, r.h);
  cairo_clip(cr);
  set_color(cr, mark_ink(theme, mark));
  cairo_set_line_width(cr, step * 0.28);
  const double span = r.w + r.h;
  if (mark == Mark::PosInf) {
    for (double y = r.y + step / 2; y < r.bottom(); y += step)
      for (double x = r.x + step / 2; x < r.right(); x += step) {
        cairo_arc(cr, x, y, step * 0.22, 0, 2 * M_PI);
        cairo_fill(cr);
      }
  } else {
    for (double d = -r.h; d < span; d += step) {
      // "/" stripes for -inf and NaN; NaN adds "\" (cross-hatch).
      cairo_move_to(cr, r.x + d, r.bottom());
      cairo_line_to(cr, r.x + d + r.h, r.y);
      if (mark == Mark::NaN) {
        cairo_move_to(cr, r.x + d, r.y);
        cairo_line_to(cr, r.x + d + r.h, r.bottom());
      }
    }
    cairo_stroke(cr);
  }
  cairo_restore(cr);
}

Color cell_color(const Heatmap& h, const Theme& theme, float v) {
  const Mark m = mark_of(v);
  if (m != Mark::None) return mark_fill(theme, m);
  const float t = h.hi > h.lo ? (v - h.lo) / (h.hi - h.lo) : 0.5f;
  return colormap(h.map, t);
}

void draw_heatmap(cairo_t* cr, const Heatmap& h, const Theme& theme, double scale) {
  if (h.rows <= 0 || h.cols <= 0) return;
  const double cw = h.rect.w / static_cast<double>(h.cols), ch = h.rect.h / static_cast<double>(h.rows);
  // A thin gap between cells once a cell is large enough on the output (>= 8 device px).
  const double gap =
      h.gaps && std::min(cw, ch) * scale >= 8 ? std::min(2.0, std::min(cw, ch) * 0.06) : 0.0;
  if (h.as_image() || gap == 0) {
    // One image, one pixel per cell, scaled without smoothing: cells that touch drawn as
    // separate rectangles would show hairline seams where their anti-aliased edges meet.
    cairo_surface_t* img =
        cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(h.cols), static_cast<int>(h.rows));
    unsigned char* data = cairo_image_surface_get_data(img);
    const int stride = cairo_image_surface_get_stride(img);
    for (int64_t r = 0; r < h.rows; ++r)
      for (int64_t c = 0; c < h.cols; ++c) {
        const Color col = cell_color(h, theme, h.values[static_cast<size_t>(r * h.cols + c)]);
        uint32_t px = (static_cast<uint32_t>(std::lround(col.r * 255)) << 16) |
                      (static_cast<uint32_t>(std::lround(col.g * 255)) << 8) |
                      static_cast<uint32_t>(std::lround(col.b * 255));
        std::memcpy(data + r * stride + c * 4, &px, 4);
      }
    cairo_surface_mark_dirty(img);
    cairo_save(cr);
    cairo_translate(cr, h.rect.x, h.rect.y);
    cairo_scale(cr, h.rect.w / static_cast<double>(h.cols), h.rect.h / static_cast<double>(h.rows));
    cairo_set_source_surface(cr, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_paint(cr);
    cairo_restore(cr);
    cairo_surface_destroy(img);
    if (!h.as_image())  // NaN / ±inf keep their patterns, not only their colours
      for (int64_t r = 0; r < h.rows; ++r)
        for (int64_t c = 0; c < h.cols; ++c)
          if (const Mark m = mark_of(h.values[static_cast<size_t>(r * h.cols + c)]); m != Mark::None)
            draw_mark(cr,
                      {static_cast<float>(h.rect.x + c * cw), static_cast<float>(h.rect.y + r * ch),
                       static_cast<float>(cw), static_cast<float>(ch)},
                      m, theme);
    return;
  }
  set_color(cr, h.gap);
  cairo_rectangle(cr, h.rect.x, h.rect.y, h.rect.w, h.rect.h);
  cairo_fill(cr);
  for (int64_t r = 0; r < h.rows; ++r)
    for (int64_t c = 0; c < h.cols; ++c) {
      const float v = h.values[static_cast<size_t>(r * h.cols + c)];
      const Rect cell{static_cast<float>(h.rect.x + c * cw + gap / 2), static_cast<float>(h.rect.y + r * ch + gap / 2),
                      static_cast<float>(cw - gap), static_cast<float>(ch - gap)};
      const Mark m = mark_of(v);
      if (m != Mark::None) {
        draw_mark(cr, cell, m, theme);
      } else {
        set_color(cr, cell_color(h, theme, v));
        cairo_rectangle(cr, cell.x, cell.y, cell.w, cell.h);
        cairo_fill(cr);
      }
    }
}

// [SECTION] items ---------------------------------------------------------------------------

void draw_text(cairo_t* cr, const Text& t) {
  cairo_select_font_face(cr, kFontFamily, CAIRO_FONT_SLANT_NORMAL,
                         t.bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, t.size);
  cairo_font_extents_t fe;
  cairo_font_extents(cr, &fe);
  const double w = text_width(t.text, t.size, t.bold);
  double x = t.x;
  if (t.anchor == Anchor::Middle) x -= w / 2;
  if (t.anchor == Anchor::End) x -= w;
  set_color(cr, t.color);
  cairo_move_to(cr, x, t.y + (fe.ascent - fe.descent) / 2);
  cairo_show_text(cr, t.text.c_str());
  cairo_new_path(cr);
}

void draw_box(cairo_t* cr, const Box& b, const Theme& theme) {
  if (b.mark != Mark::None) {
    draw_mark(cr, b.rect, b.mark, theme);
  } else if (b.fill.a > 0) {
    set_color(cr, b.fill);
    cairo_rectangle(cr, b.rect.x, b.rect.y, b.rect.w, b.rect.h);
    cairo_fill(cr);
  }
  if (b.stroke.a > 0 && b.stroke_width > 0) {
    set_color(cr, b.stroke);
    cairo_set_line_width(cr, b.stroke_width);
    const double i = b.stroke_width / 2;
    cairo_rectangle(cr, b.rect.x + i, b.rect.y + i, b.rect.w - 2 * i, b.rect.h - 2 * i);
    cairo_stroke(cr);
  }
}

void draw_band(cairo_t* cr, const Band& b) {
  if (b.x.size() < 2) return;
  set_color(cr, b.fill);
  cairo_move_to(cr, b.x[0], b.hi[0]);
  for (size_t i = 1; i < b.x.size(); ++i) cairo_line_to(cr, b.x[i], b.hi[i]);
  for (size_t i = b.x.size(); i-- > 0;) cairo_line_to(cr, b.x[i], b.lo[i]);
  cairo_close_path(cr);
  cairo_fill(cr);
}

void draw_line(cairo_t* cr, const Line& l) {
  set_color(cr, l.color);
  cairo_set_line_width(cr, l.width);
  if (l.dashed) {
    const double d[2] = {l.width * 3, l.width * 2};
    cairo_set_dash(cr, d, 2, 0);
  }
  double x2 = l.x2, y2 = l.y2;
  const double dx = l.x2 - l.x1, dy = l.y2 - l.y1, len = std::hypot(dx, dy);
  const double head = l.width * 4 + 6;
  if (l.arrow && len > head) {
    x2 -= dx / len * head * 0.8;
    y2 -= dy / len * head * 0.8;
  }
  cairo_move_to(cr, l.x1, l.y1);
  cairo_line_to(cr, x2, y2);
  cairo_stroke(cr);
  cairo_set_dash(cr, nullptr, 0, 0);
  if (l.arrow && len > 0) {
    const double ux = dx / len, uy = dy / len;
    cairo_move_to(cr, l.x2, l.y2);
    cairo_line_to(cr, l.x2 - ux * head - uy * head * 0.5, l.y2 - uy * head + ux * head * 0.5);
    cairo_line_to(cr, l.x2 - ux * head + uy * head * 0.5, l.y2 - uy * head - ux * head * 0.5);
    cairo_close_path(cr);
    cairo_fill(cr);
  }
}

}  // namespace

void draw_cairo(const Figure& f, cairo_t* cr, double scale) {
  const Theme& theme = theme_by_name(f.theme);
  cairo_save(cr);
  cairo_scale(cr, scale, scale);
  cairo_font_options_t* o = cairo_font_options_create();
  cairo_font_options_set_hint_metrics(o, CAIRO_HINT_METRICS_OFF);
  cairo_set_font_options(cr, o);
  cairo_font_options_destroy(o);
  set_color(cr, f.background);
  cairo_rectangle(cr, 0, 0, f.width, f.height);
  cairo_fill(cr);
  for (const Item& item : f.items) {
    if (const auto* t = std::get_if<Text>(&item)) draw_text(cr, *t);
    else if (const auto* b = std::get_if<Box>(&item)) draw_box(cr, *b, theme);
    else if (const auto* l = std::get_if<Line>(&item)) draw_line(cr, *l);
    else if (const auto* band = std::get_if<Band>(&item)) draw_band(cr, *band);
    else if (const auto* h = std::get_if<Heatmap>(&item)) draw_heatmap(cr, *h, theme, scale);
  }
  cairo_restore(cr);
}

// [SECTION] files -------------------------------------------------------------------------------

namespace {

cairo_surface_t* render_surface(const Figure& f, int width) {
  const int height = pixel_height(f, width);
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  cairo_t* cr = cairo_create(s);
  draw_cairo(f, cr, static_cast<double>(width) / f.width);
  cairo_destroy(cr);
  cairo_surface_flush(s);
  return s;
}

}  // namespace

std::vector<uint8_t> render_rgba(const Figure& f, int width) {
  cairo_surface_t* s = render_surface(f, width);
  const int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
  const int stride = cairo_image_surface_get_stride(s);
  const unsigned char* data = cairo_image_surface_get_data(s);
  std::vector<uint8_t> out(static_cast<size_t>(w) * static_cast<size_t>(h) * 4);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint32_t px;
      std::memcpy(&px, data + y * stride + x * 4, 4);
      uint8_t* o = &out[(static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 4];
      // ARGB32 is premultiplied; the figure paints an opaque background first.
      o[0] = static_cast<uint8_t>(px >> 16);
      o[1] = static_cast<uint8_t>(px >> 8);
      o[2] = static_cast<uint8_t>(px);
      o[3] = static_cast<uint8_t>(px >> 24);
    }
  cairo_surface_destroy(s);
  return out;
}

namespace {

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

namespace {

bool fail(const std::string& path, const std::string& why, std::string* error) {
  if (error) *error = path + ": " + why;
  return false;
}

}  // namespace

bool write_png(const Figure& f, const std::string& path, int width, std::string* error) {
  cairo_surface_t* s = render_surface(f, width);
  std::string bytes;
  const cairo_status_t st = cairo_surface_write_to_png_stream(s, append_bytes, &bytes);
  cairo_surface_destroy(s);
  if (st != CAIRO_STATUS_SUCCESS) return fail(path, std::string("cannot encode PNG: ") + cairo_status_to_string(st), error);
  return write_file_atomically(path, bytes, error);  // temp file, checked writes, rename
}

bool write_pdf(const std::vector<Figure>& pages, const std::string& path, const std::string& title,
               std::string* error) {
  const double page_w = 960.0;
  const Figure* first = pages.empty() ? nullptr : &pages.front();
  const double page_h = first ? page_w * first->height / first->width : 540.0;
  std::string bytes;
  cairo_surface_t* s = cairo_pdf_surface_create_for_stream(append_bytes, &bytes, page_w, page_h);
  cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, title.c_str());
  cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "attnsim");
  cairo_t* cr = cairo_create(s);
  for (const Figure& f : pages) {
    cairo_pdf_surface_set_size(s, page_w, page_w * f.height / f.width);
    draw_cairo(f, cr, page_w / f.width);
    cairo_show_page(cr);
  }
  cairo_destroy(cr);
  cairo_surface_finish(s);
  const cairo_status_t st = cairo_surface_status(s);
  cairo_surface_destroy(s);
  if (st != CAIRO_STATUS_SUCCESS) return fail(path, std::string("cannot encode PDF: ") + cairo_status_to_string(st), error);
  return write_file_atomically(path, bytes, error);  // temp file, checked writes, rename
}

}  // namespace attnsim::figure
