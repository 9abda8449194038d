// Colour maps, themes, the CVD simulation. See palette.h.
#include "figure/palette.h"

#include <algorithm>
#include <cmath>

#include "engine/error.h"

namespace attnsim::figure {

Color rgb(unsigned hex, float alpha) {
  return {static_cast<float>((hex >> 16) & 0xff) / 255.0f,
          static_cast<float>((hex >> 8) & 0xff) / 255.0f,
          static_cast<float>(hex & 0xff) / 255.0f, alpha};
}

Color mix(Color a, Color b, float t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t, 1};
}

namespace {

// Eleven evenly spaced stops of each map, interpolated linearly in sRGB: viridis is
// matplotlib's table at 0, 0.1, ..., 1; cividis follows matplotlib's (dark blue to yellow, its
// stops written from it by hand, so close rather than exact); PuOr is ColorBrewer's
// 11-class scheme, purple at the negative end.
constexpr std::array<unsigned, 11> kViridis = {0x440154, 0x482475, 0x414487, 0x355f8d,
                                               0x2a788e, 0x21918c, 0x22a884, 0x44bf70,
                                               0x7ad151, 0xbddf26, 0xfde725};
constexpr std::array<unsigned, 11> kCividis = {0x00224e, 0x123570, 0x3b496c, 0x575d6d,
                                               0x707173, 0x8a8779, 0xa69d75, 0xc4b56c,
                                               0xe4cf5b, 0xf5df49, 0xfee838};
constexpr std::array<unsigned, 11> kPuOr = {0x2d004b, 0x542788, 0x8073ac, 0xb2abd2,
                                            0xd8daeb, 0xf7f7f7, 0xfee0b6, 0xfdb863,
                                            0xe08214, 0xb35806, 0x7f3b08};

constexpr unsigned kMaskShown = 0xd9d9d9, kMaskHidden = 0x3b3b3b;

Color lerp_table(const std::array<unsigned, 11>& table, float t) {
  if (!(t > 0)) t = 0;  // NaN too
  if (t > 1) t = 1;
  const float x = t * 10.0f;
  const int i = std::min(9, static_cast<int>(x));
  const float f = x - static_cast<float>(i);
  const Color a = rgb(table[static_cast<size_t>(i)]), b = rgb(table[static_cast<size_t>(i + 1)]);
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f, 1};
}

float to_linear(float c) { return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f); }
float to_srgb(float c) {
  c = std::clamp(c, 0.0f, 1.0f);
  return c <= 0.0031308f ? c * 12.92f : 1.055f * std::pow(c, 1.0f / 2.4f) - 0.055f;
}

}  // namespace

Color colormap(ColorMapId map, float t) {
  switch (map) {
    case ColorMapId::Viridis: return lerp_table(kViridis, t);
    case ColorMapId::Cividis: return lerp_table(kCividis, t);
    case ColorMapId::Diverging: return lerp_table(kPuOr, t);
    case ColorMapId::Mask: return t >= 0.5f ? rgb(kMaskHidden) : rgb(kMaskShown);
  }
  return {};
}

std::array<Color, kColormapStops> colormap_stops(ColorMapId map) {
  static_assert(kColormapStops == static_cast<int>(kViridis.size()));
  std::array<Color, kColormapStops> out{};
  for (size_t i = 0; i < out.size(); ++i) {
    switch (map) {
      case ColorMapId::Viridis: out[i] = rgb(kViridis[i]); break;
      case ColorMapId::Cividis: out[i] = rgb(kCividis[i]); break;
      case ColorMapId::Diverging: out[i] = rgb(kPuOr[i]); break;
      case ColorMapId::Mask: out[i] = rgb(2 * i >= out.size() - 1 ? kMaskHidden : kMaskShown); break;
    }
  }
  return out;
}

std::array<float, 2> colormap_ends(ColorMapId map, float lo, float hi) {
  switch (map) {
    case ColorMapId::Mask: return {0, 1};
    case ColorMapId::Diverging: {
      const float m = std::max({std::fabs(lo), std::fabs(hi), 1e-6f});
      return {-m, m};
    }
    case ColorMapId::Viridis:
    case ColorMapId::Cividis: break;
  }
  return {0, std::max(hi, 1e-6f)};
}

const char* colormap_name(ColorMapId map) {
  switch (map) {
    case ColorMapId::Viridis: return "viridis";
    case ColorMapId::Cividis: return "cividis";
    case ColorMapId::Diverging: return "PuOr (diverging)";
    case ColorMapId::Mask: return "mask";
  }
  return "";
}

const Theme& print_theme() {
  static const Theme t{"print",       rgb(0xffffff), rgb(0x1a1a1a), rgb(0x5a5a5a),
                       rgb(0x0b5fa5), rgb(0x8c8c8c), rgb(0xb0b0b0), rgb(0x262626),
                       rgb(0xf2f2f2), rgb(0x1a1a1a), rgb(0xffffff), rgb(0xffffff),
                       rgb(0xc0470a)};
  return t;
}

const Theme& projector_theme() {
  static const Theme t{"projector",   rgb(0x121418), rgb(0xf2f2f2), rgb(0xb4b8c0),
                       rgb(0x7cc4ff), rgb(0x6b7280), rgb(0xb0b0b0), rgb(0x262626),
                       rgb(0xf2f2f2), rgb(0x1a1a1a), rgb(0xffffff), rgb(0x121418),
                       rgb(0xffb347)};
  return t;
}

const Theme& theme_on(Color background) {
  const double luminance = 0.2126 * to_linear(background.r) + 0.7152 * to_linear(background.g) +
                           0.0722 * to_linear(background.b);
  return luminance < 0.18 ? projector_theme() : print_theme();
}

const Theme& theme_by_name(const std::string& name) {
  if (name == "print") return print_theme();
  if (name == "projector") return projector_theme();
  throw Error("unknown theme '" + name + "' (print or projector)");
}

Color mark_fill(const Theme& theme, Mark mark) {
  switch (mark) {
    case Mark::NaN: return theme.nan;
    case Mark::NegInf: return theme.neginf;
    case Mark::PosInf: return theme.posinf;
    case Mark::None: break;
  }
  return theme.gap;
}

Color category_colour(int64_t i) {
  static const unsigned kColours[] = {0xe69f00, 0x56b4e9, 0x009e73, 0xf0e442, 0x0072b2, 0xd55e00, 0xcc79a7, 0x999999};
  return rgb(kColours[static_cast<size_t>(std::max<int64_t>(i, 0)) % 8]);
}

Color mark_ink(const Theme& theme, Mark mark) {
  return mark == Mark::NegInf ? theme.mark_ink_dark : theme.mark_ink;
}

Color simulate(Vision v, Color c) {
  if (v == Vision::Normal) return c;
  // Machado et al. 2009, severity 1.0.
  static constexpr double kDeut[3][3] = {{0.367322, 0.860646, -0.227968},
                                         {0.280085, 0.672501, 0.047413},
                                         {-0.011820, 0.042940, 0.968881}};
  static constexpr double kProt[3][3] = {{0.152286, 1.052583, -0.204868},
                                         {0.114503, 0.786281, 0.099216},
                                         {-0.003882, -0.048116, 1.051998}};
  const auto& m = v == Vision::Deuteranopia ? kDeut : kProt;
  const double l[3] = {to_linear(c.r), to_linear(c.g), to_linear(c.b)};
  float out[3];
  for (int i = 0; i < 3; ++i)
    out[i] = to_srgb(static_cast<float>(m[i][0] * l[0] + m[i][1] * l[1] + m[i][2] * l[2]));
  return {out[0], out[1], out[2], c.a};
}

namespace {

std::array<double, 3> lab(Color c) {
  const double r = to_linear(c.r), g = to_linear(c.g), b = to_linear(c.b);
  const double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const double z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; };
  return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}

}  // namespace

double delta_e(Color a, Color b) {
  const auto p = lab(a), q = lab(b);
  return std::sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                   (p[2] - q[2]) * (p[2] - q[2]));
}

double min_adjacent_delta_e(ColorMapId map, int stops, Vision v) {
  double best = 1e9;
  for (int i = 0; i + 1 < stops; ++i) {
    const float t0 = static_cast<float>(i) / static_cast<float>(stops - 1);
    const float t1 = static_cast<float>(i + 1) / static_cast<float>(stops - 1);
    best = std::min(best, delta_e(simulate(v, colormap(map, t0)), simulate(v, colormap(map, t1))));
  }
  return best;
}

}  // namespace attnsim::figure
