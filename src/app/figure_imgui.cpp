// The ImGui sink of figures. See figure_imgui.h.
#include "app/figure_imgui.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "app/fonts.h"
#include "app/ui_scale.h"
#include "app/frame_texture.h"
#include "views/i18n.h"
#include "figure/palette.h"
#include "figure/text_metrics.h"

namespace attnsim::app {

namespace fig = attnsim::figure;

namespace {

ImU32 col(fig::Color c) { return ImGui::ColorConvertFloat4ToU32(ImVec4(c.r, c.g, c.b, c.a)); }

struct Xform {
  ImVec2 o;
  float s;
  ImVec2 p(float x, float y) const { return {o.x + x * s, o.y + y * s}; }
};

void draw_mark(ImDrawList* dl, const Xform& X, const fig::Rect& r, fig::Mark m, const fig::Theme& th) {
  const ImVec2 a = X.p(r.x, r.y), b = X.p(r.right(), r.bottom());
  dl->AddRectFilled(a, b, col(fig::mark_fill(th, m)));
  const float step = std::clamp(std::min(r.w, r.h) / 3.0f, 3.0f, 14.0f) * X.s;
  if (step < 3) return;  // too small to show a pattern: the colour alone
  const ImU32 ink = col(fig::mark_ink(th, m));
  dl->PushClipRect(a, b, true);
  const float w = b.x - a.x, h = b.y - a.y;
  if (m == fig::Mark::PosInf) {
    for (float y = a.y + step / 2; y < b.y; y += step)
      for (float x = a.x + step / 2; x < b.x; x += step) dl->AddCircleFilled({x, y}, step * 0.22f, ink, 8);
  } else {
    for (float d = -h; d < w + h; d += step) {
      dl->AddLine({a.x + d, b.y}, {a.x + d + h, a.y}, ink, step * 0.28f);
      if (m == fig::Mark::NaN) dl->AddLine({a.x + d, a.y}, {a.x + d + h, b.y}, ink, step * 0.28f);
    }
  }
  dl->PopClipRect();
}

// Below this many blocks rectangles are cheaper than a texture upload and keep exact edges;
// above it one textured quad spares the software rasteriser (llvmpipe) a triangle pair per cell
// (the language model's 16 heads of 15 x 15: model view 11.6 -> 9.8 ms of llvmpipe CPU a frame).
constexpr int64_t kRectBlocks = 64;

// Screen block (r, c) of a heatmap shown as br x bc blocks: the mean of its cells (NaN if any
// is NaN, else the first infinity), its colour and its mark.
fig::Color block_colour(const fig::Heatmap& h, int64_t r, int64_t c, int64_t br, int64_t bc, const fig::Theme& th,
                        fig::Mark* mark) {
  const int64_t r0 = r * h.rows / br, r1 = (r + 1) * h.rows / br;
  const int64_t c0 = c * h.cols / bc, c1 = (c + 1) * h.cols / bc;
  double sum = 0;
  int64_t n = 0;
  float special = 0;
  bool has_special = false;
  for (int64_t i = r0; i < r1; ++i)
    for (int64_t j = c0; j < c1; ++j) {
      const float v = h.values[static_cast<size_t>(i * h.cols + j)];
      if (std::isfinite(v)) sum += v, ++n;
      else if (!has_special || std::isnan(v)) special = v, has_special = true;
    }
  *mark = has_special ? fig::mark_of(special) : fig::Mark::None;
  if (has_special) return fig::mark_fill(th, *mark);
  const float v = static_cast<float>(sum / static_cast<double>(std::max<int64_t>(1, n)));
  return fig::colormap(h.map, h.hi > h.lo ? (v - h.lo) / (h.hi - h.lo) : 0.5f);
}

// What a heatmap's texture shows: its values, its colour scale, its block grid, the theme.
uint64_t image_key(const fig::Heatmap& h, int64_t br, int64_t bc, const fig::Theme& th) {
  const std::string_view bytes(reinterpret_cast<const char*>(h.values.data()), h.values.size() * sizeof(float));
  uint64_t k = std::hash<std::string_view>{}(bytes);
  for (const uint64_t x : {static_cast<uint64_t>(h.rows), static_cast<uint64_t>(h.cols), static_cast<uint64_t>(br),
                           static_cast<uint64_t>(bc), static_cast<uint64_t>(h.map), static_cast<uint64_t>(std::hash<float>{}(h.lo)),
                           static_cast<uint64_t>(std::hash<float>{}(h.hi)), static_cast<uint64_t>(std::hash<std::string>{}(th.name))})
    k = (k ^ x) * 0x100000001b3ull;  // FNV-1a's prime: mixes each part in
  return k;
}

void draw_heatmap(ImDrawList* dl, const Xform& X, const fig::Heatmap& h, const fig::Theme& th) {
  if (h.rows <= 0 || h.cols <= 0) return;
  // Screen blocks: at most one per pixel (and 1024 per axis).
  const int64_t br = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(h.rect.h * X.s)), 1, std::min<int64_t>(h.rows, 1024));
  const int64_t bc = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(h.rect.w * X.s)), 1, std::min<int64_t>(h.cols, 1024));
  const float cw = h.rect.w / static_cast<float>(bc), ch = h.rect.h / static_cast<float>(br);
  const float gap = (h.gaps && br == h.rows && bc == h.cols && std::min(cw, ch) * X.s >= 8)
                        ? std::min(2.0f, std::min(cw, ch) * 0.06f)
                        : 0.0f;
  const bool texture = br * bc > kRectBlocks;
  auto cell_rect = [&](int64_t r, int64_t c) {
    return fig::Rect{h.rect.x + static_cast<float>(c) * cw + gap / 2, h.rect.y + static_cast<float>(r) * ch + gap / 2,
                     cw - gap, ch - gap};
  };
  fig::Mark mark = fig::Mark::None;
  if (!texture) {
    if (gap > 0) dl->AddRectFilled(X.p(h.rect.x, h.rect.y), X.p(h.rect.right(), h.rect.bottom()), col(h.gap));
    for (int64_t r = 0; r < br; ++r)
      for (int64_t c = 0; c < bc; ++c) {
        const fig::Color fill = block_colour(h, r, c, br, bc, th, &mark);
        const fig::Rect cell = cell_rect(r, c);
        if (mark != fig::Mark::None) draw_mark(dl, X, cell, mark, th);
        else dl->AddRectFilled(X.p(cell.x, cell.y), X.p(cell.right(), cell.bottom()), col(fill));
      }
    return;
  }
  const ImTextureID tex = kept_texture(image_key(h, br, bc, th), static_cast<int>(bc), static_cast<int>(br),
                                       [&](std::vector<ImU32>& rgba) {
                                         for (int64_t r = 0; r < br; ++r)
                                           for (int64_t c = 0; c < bc; ++c)  // ImU32 is RGBA in memory order
                                             rgba[static_cast<size_t>(r * bc + c)] = col(block_colour(h, r, c, br, bc, th, &mark));
                                       });
  dl->AddImage(tex, X.p(h.rect.x, h.rect.y), X.p(h.rect.right(), h.rect.bottom()));
  // The gaps between whole cells: one band per row and column boundary, edges half width.
  if (gap > 0) {
    const ImU32 g = col(h.gap);
    for (int64_t c = 0; c <= bc; ++c) {
      const float x = h.rect.x + static_cast<float>(c) * cw;
      dl->AddRectFilled(X.p(std::max(h.rect.x, x - gap / 2), h.rect.y), X.p(std::min(h.rect.right(), x + gap / 2), h.rect.bottom()), g);
    }
    for (int64_t r = 0; r <= br; ++r) {
      const float y = h.rect.y + static_cast<float>(r) * ch;
      dl->AddRectFilled(X.p(h.rect.x, std::max(h.rect.y, y - gap / 2)), X.p(h.rect.right(), std::min(h.rect.bottom(), y + gap / 2)), g);
    }
  }
  // Patterns over the marked blocks, where they are large enough to show one (in a texture
  // of tiny blocks their colour alone); found only when some value is not finite.
  if (std::min(cw, ch) * X.s < 6 || std::all_of(h.values.begin(), h.values.end(), [](float v) { return std::isfinite(v); }))
    return;
  for (int64_t r = 0; r < br; ++r)
    for (int64_t c = 0; c < bc; ++c) {
      block_colour(h, r, c, br, bc, th, &mark);
      if (mark != fig::Mark::None) draw_mark(dl, X, cell_rect(r, c), mark, th);
    }
}

}  // namespace

void want_figure_glyphs(const fig::Figure& f) {
  for (const fig::Item& i : f.items)
    if (const auto* t = std::get_if<fig::Text>(&i)) fonts().want(t->text);
}

float readable_scale(const fig::Figure& f, float fit) {
  float smallest = 0;
  for (const auto& item : f.items)
    if (const auto* t = std::get_if<fig::Text>(&item); t && !t->text.empty() && t->size > 0)
      smallest = smallest == 0 ? t->size : std::min(smallest, t->size);
  if (smallest == 0) return fit;
  return std::max(fit, kMinScreenTextPx * ui_scale() / smallest);
}

void draw_figure(ImDrawList* dl, const fig::Figure& f, ImVec2 origin, float scale, Backdrop backdrop) {
  const fig::Theme& th = fig::theme_by_name(f.theme);
  const Xform X{origin, scale};
  if (backdrop == Backdrop::Drawn) dl->AddRectFilled(X.p(0, 0), X.p(f.width, f.height), col(f.background));
  ImFont* font = ImGui::GetFont();
  for (const fig::Item& item : f.items) {
    if (const auto* t = std::get_if<fig::Text>(&item)) {
      const float size = t->size * scale;
      const ImVec2 ext = font->CalcTextSizeA(size, FLT_MAX, 0.0f, t->text.c_str());
      float x = t->x * scale + origin.x;
      if (t->anchor == fig::Anchor::Middle) x -= ext.x / 2;
      if (t->anchor == fig::Anchor::End) x -= ext.x;
      const ImVec2 pos{x, origin.y + t->y * scale - ext.y / 2};
      dl->AddText(font, size, pos, col(t->color), t->text.c_str());
      // ImGui has no bold face: a second pass one pixel right stands in for it, where the
      // glyphs are large enough not to smear (below 15 px Hangul strokes run together).
      if (t->bold && size >= 15)
        dl->AddText(font, size, {pos.x + std::max(1.0f, size / 28), pos.y}, col(t->color), t->text.c_str());
    } else if (const auto* b = std::get_if<fig::Box>(&item)) {
      if (b->mark != fig::Mark::None) draw_mark(dl, X, b->rect, b->mark, th);
      else if (b->fill.a > 0) dl->AddRectFilled(X.p(b->rect.x, b->rect.y), X.p(b->rect.right(), b->rect.bottom()), col(b->fill));
      if (b->stroke.a > 0 && b->stroke_width > 0)
        dl->AddRect(X.p(b->rect.x, b->rect.y), X.p(b->rect.right(), b->rect.bottom()), col(b->stroke), 0, 0,
                    std::max(1.0f, b->stroke_width * scale));
    } else if (const auto* l = std::get_if<fig::Line>(&item)) {
      dl->AddLine(X.p(l->x1, l->y1), X.p(l->x2, l->y2), col(l->color), std::max(1.0f, l->width * scale));
      if (l->arrow) {
        const float dx = l->x2 - l->x1, dy = l->y2 - l->y1, len = std::hypot(dx, dy), head = l->width * 4 + 6;
        if (len > 0) {
          const float ux = dx / len, uy = dy / len;
          dl->AddTriangleFilled(X.p(l->x2, l->y2),
                                X.p(l->x2 - ux * head - uy * head * 0.5f, l->y2 - uy * head + ux * head * 0.5f),
                                X.p(l->x2 - ux * head + uy * head * 0.5f, l->y2 - uy * head - ux * head * 0.5f),
                                col(l->color));
        }
      }
    } else if (const auto* band = std::get_if<fig::Band>(&item)) {
      // ImGui fills convex shapes only: one quad per interval (each is convex: vertical
      // sides). Without anti-aliased edges, so neighbouring quads meet without a seam.
      const ImDrawListFlags flags = dl->Flags;
      dl->Flags &= ~ImDrawListFlags_AntiAliasedFill;
      for (size_t i = 1; i < band->x.size(); ++i) {
        const ImVec2 q[4] = {X.p(band->x[i - 1], band->hi[i - 1]), X.p(band->x[i], band->hi[i]),
                             X.p(band->x[i], band->lo[i]), X.p(band->x[i - 1], band->lo[i - 1])};
        dl->AddConvexPolyFilled(q, 4, col(band->fill));
      }
      dl->Flags = flags;
    } else if (const auto* h = std::get_if<fig::Heatmap>(&item)) {
      draw_heatmap(dl, X, *h, th);
    }
  }
}

const fig::Theme& panel_theme() {
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  return fig::theme_on({bg.x, bg.y, bg.z, 1});
}

lessons::Lang panel_lang() { return ui_lang() == Lang::Ko ? lessons::Lang::Ko : lessons::Lang::En; }

}  // namespace attnsim::app
