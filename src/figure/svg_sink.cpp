// The SVG sink. See svg_sink.h.
#include "figure/svg_sink.h"

#include <cmath>
#include <cstdio>

#include "engine/atomic_file.h"
#include "engine/error.h"
#include "figure/png_encode.h"
#include "figure/palette.h"
#include "figure/text_metrics.h"

namespace attnsim::figure {

namespace {

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  std::string s = b;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string hex(Color c) {
  char b[8];
  std::snprintf(b, sizeof b, "#%02x%02x%02x", static_cast<int>(std::lround(c.r * 255)),
                static_cast<int>(std::lround(c.g * 255)), static_cast<int>(std::lround(c.b * 255)));
  return b;
}

// fill="#rrggbb" plus fill-opacity when translucent.
std::string paint(const char* attr, Color c) {
  std::string s = std::string(" ") + attr + "=\"" + hex(c) + "\"";
  if (c.a < 1) s += std::string(" ") + attr + "-opacity=\"" + num(c.a) + "\"";
  return s;
}

std::string escape(const std::string& t) {
  std::string o;
  for (char ch : t) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += ch;
    }
  }
  return o;
}

std::string base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    out += k[(v >> 18) & 63]; out += k[(v >> 12) & 63]; out += k[(v >> 6) & 63]; out += k[v & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += i + 1 < in.size() ? k[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

const char* mark_id(Mark m) {
  switch (m) {
    case Mark::NaN: return "mark-nan";
    case Mark::NegInf: return "mark-neginf";
    case Mark::PosInf: return "mark-posinf";
    case Mark::None: break;
  }
  return "";
}

// The three mark patterns, 12 units per tile (the same look as the Cairo sink's).
std::string pattern_defs(const Theme& th) {
  std::string s = "<defs>\n";
  for (Mark m : {Mark::NaN, Mark::NegInf, Mark::PosInf}) {
    s += "<pattern id=\"" + std::string(mark_id(m)) +
         "\" patternUnits=\"userSpaceOnUse\" width=\"12\" height=\"12\">"
         "<rect width=\"12\" height=\"12\"" + paint("fill", mark_fill(th, m)) + "/>";
    const std::string ink = paint("stroke", mark_ink(th, m));
    if (m == Mark::PosInf) {
      s += "<circle cx=\"6\" cy=\"6\" r=\"2.6\"" + paint("fill", mark_ink(th, m)) + "/>";
    } else {
      s += "<path d=\"M0,12 L12,0 M-3,3 L3,-3 M9,15 L15,9\"" + ink + " stroke-width=\"3\"/>";
      if (m == Mark::NaN) s += "<path d=\"M0,0 L12,12 M-3,9 L3,15 M9,-3 L15,3\"" + ink + " stroke-width=\"3\"/>";
    }
    s += "</pattern>\n";
  }
  return s + "</defs>\n";
}

void heatmap_svg(std::string& s, const Heatmap& h, const Theme& th) {
  if (h.rows <= 0 || h.cols <= 0) return;
  auto color_of = [&](float v) {
    const Mark m = mark_of(v);
    if (m != Mark::None) return mark_fill(th, m);
    return colormap(h.map, h.hi > h.lo ? (v - h.lo) / (h.hi - h.lo) : 0.5f);
  };
  if (h.as_image()) {
    std::vector<uint8_t> rgba(static_cast<size_t>(h.rows * h.cols) * 4);
    for (size_t i = 0; i < h.values.size(); ++i) {
      const Color c = color_of(h.values[i]);
      rgba[i * 4 + 0] = static_cast<uint8_t>(std::lround(c.r * 255));
      rgba[i * 4 + 1] = static_cast<uint8_t>(std::lround(c.g * 255));
      rgba[i * 4 + 2] = static_cast<uint8_t>(std::lround(c.b * 255));
      rgba[i * 4 + 3] = 255;
    }
    s += "<image x=\"" + num(h.rect.x) + "\" y=\"" + num(h.rect.y) + "\" width=\"" + num(h.rect.w) +
         "\" height=\"" + num(h.rect.h) +
         "\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\" href=\"data:image/png;base64," +
         base64(encode_png(static_cast<int>(h.cols), static_cast<int>(h.rows), rgba)) + "\"/>\n";
    return;
  }
  const double cw = h.rect.w / static_cast<double>(h.cols), ch = h.rect.h / static_cast<double>(h.rows);
  const double gap = h.gaps && std::min(cw, ch) >= 8 ? std::min(2.0, std::min(cw, ch) * 0.06) : 0.0;
  // Touching cells without anti-aliasing: smoothed edges that meet show hairline seams.
  s += gap > 0 ? "<g>" : "<g shape-rendering=\"crispEdges\">";
  if (gap > 0)
    s += "<rect x=\"" + num(h.rect.x) + "\" y=\"" + num(h.rect.y) + "\" width=\"" + num(h.rect.w) +
         "\" height=\"" + num(h.rect.h) + "\"" + paint("fill", h.gap) + "/>";
  for (int64_t r = 0; r < h.rows; ++r)
    for (int64_t c = 0; c < h.cols; ++c) {
      const float v = h.values[static_cast<size_t>(r * h.cols + c)];
      const Mark m = mark_of(v);
      s += "<rect x=\"" + num(h.rect.x + c * cw + gap / 2) + "\" y=\"" + num(h.rect.y + r * ch + gap / 2) +
           "\" width=\"" + num(cw - gap) + "\" height=\"" + num(ch - gap) + "\" fill=\"" +
           (m != Mark::None ? "url(#" + std::string(mark_id(m)) + ")" : hex(color_of(v))) + "\"/>";
    }
  s += "</g>\n";
}

}  // namespace

std::string svg_document(const Figure& f, int width) {
  const Theme& th = theme_by_name(f.theme);
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                  "\" height=\"" + std::to_string(pixel_height(f, width)) + "\" viewBox=\"0 0 " +
                  num(f.width) + " " + num(f.height) + "\" font-family=\"" + kFontFamily +
                  ", 'Noto Sans CJK KR', sans-serif\">\n";
  s += "<title>" + escape(f.title) + "</title>\n";
  s += pattern_defs(th);
  s += "<rect width=\"" + num(f.width) + "\" height=\"" + num(f.height) + "\"" + paint("fill", f.background) + "/>\n";
  for (const Item& item : f.items) {
    if (const auto* t = std::get_if<Text>(&item)) {
      const char* anchor = t->anchor == Anchor::Middle ? "middle" : t->anchor == Anchor::End ? "end" : "start";
      s += "<text class=\"" + escape(t->role) + "\" x=\"" + num(t->x) + "\" y=\"" + num(t->y) +
           "\" font-size=\"" + num(t->size) + "\" text-anchor=\"" + anchor +
           "\" dominant-baseline=\"central\"" + (t->bold ? " font-weight=\"bold\"" : "") +
           paint("fill", t->color) + ">" + escape(t->text) + "</text>\n";
    } else if (const auto* b = std::get_if<Box>(&item)) {
      s += "<rect x=\"" + num(b->rect.x) + "\" y=\"" + num(b->rect.y) + "\" width=\"" + num(b->rect.w) +
           "\" height=\"" + num(b->rect.h) + "\"";
      if (b->mark != Mark::None) s += " fill=\"url(#" + std::string(mark_id(b->mark)) + ")\"";
      else if (b->fill.a > 0) s += paint("fill", b->fill);
      else s += " fill=\"none\"";
      if (b->stroke.a > 0 && b->stroke_width > 0)
        s += paint("stroke", b->stroke) + " stroke-width=\"" + num(b->stroke_width) + "\"";
      s += "/>\n";
    } else if (const auto* l = std::get_if<Line>(&item)) {
      const double dx = l->x2 - l->x1, dy = l->y2 - l->y1, len = std::hypot(dx, dy);
      const double head = l->width * 4 + 6;
      double x2 = l->x2, y2 = l->y2;
      if (l->arrow && len > head) {
        x2 -= dx / len * head * 0.8;
        y2 -= dy / len * head * 0.8;
      }
      s += "<line x1=\"" + num(l->x1) + "\" y1=\"" + num(l->y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) +
           "\"" + paint("stroke", l->color) + " stroke-width=\"" + num(l->width) + "\"" +
           (l->dashed ? " stroke-dasharray=\"" + num(l->width * 3) + " " + num(l->width * 2) + "\"" : "") + "/>\n";
      if (l->arrow && len > 0) {
        const double ux = dx / len, uy = dy / len;
        s += "<polygon points=\"" + num(l->x2) + "," + num(l->y2) + " " +
             num(l->x2 - ux * head - uy * head * 0.5) + "," + num(l->y2 - uy * head + ux * head * 0.5) + " " +
             num(l->x2 - ux * head + uy * head * 0.5) + "," + num(l->y2 - uy * head - ux * head * 0.5) + "\"" +
             paint("fill", l->color) + "/>\n";
      }
    } else if (const auto* band = std::get_if<Band>(&item)) {
      if (band->x.size() < 2) continue;
      s += "<polygon class=\"band\" points=\"";
      for (size_t i = 0; i < band->x.size(); ++i) s += num(band->x[i]) + "," + num(band->hi[i]) + " ";
      for (size_t i = band->x.size(); i-- > 0;) s += num(band->x[i]) + "," + num(band->lo[i]) + (i ? " " : "");
      s += "\"" + paint("fill", band->fill) + "/>\n";
    } else if (const auto* h = std::get_if<Heatmap>(&item)) {
      heatmap_svg(s, *h, th);
    }
  }
  return s + "</svg>\n";
}

bool write_svg(const Figure& f, const std::string& path, int width, std::string* error) {
  return write_file_atomically(path, svg_document(f, width), error);  // engine/atomic_file.h
}

}  // namespace attnsim::figure
