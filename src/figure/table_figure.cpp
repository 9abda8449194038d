// A table as a figure. See table_figure.h.
#include "figure/table_figure.h"

#include <algorithm>

#include "engine/error.h"
#include "figure/text_metrics.h"

namespace attnsim::figure {

namespace {

constexpr float kPad = 28;  // between columns

}  // namespace

void check_rows(const TableSpec& spec) {
  for (const auto& r : spec.rows)
    if (r.size() != spec.header.size())
      throw Error("table: a row has " + std::to_string(r.size()) + " cells, the header " +
                  std::to_string(spec.header.size()));
}

TableLayout add_table(Figure& f, const Theme& th, const Rect& area, const TableSpec& spec) {
  const size_t cols = spec.header.size();
  TableLayout out;
  if (cols == 0) return out;
  check_rows(spec);
  auto align = [&](size_t c) { return c < spec.align.size() ? spec.align[c] : Anchor::Start; };
  auto bold = [&](size_t c) { return c < spec.bold.size() && spec.bold[c]; };
  auto natural = [&](size_t c, float size) {
    float w = text_width(spec.header[c], size, true);
    for (const auto& r : spec.rows) w = std::max(w, text_width(r[c], size, bold(c)));
    return w;
  };
  // Columns 1.. at their natural width; column 0 gets the rest (at least a third), wrapped to
  // two lines. The largest size at which that holds and the rows fit wins.
  struct Fit {
    float size = kLabelMin;
    std::vector<float> widths;
    std::vector<std::vector<std::string>> names;  // column 0 wrapped
    float height = 0;
  };
  auto fit_at = [&](float size, Fit* fit) {
    fit->size = size;
    fit->widths.assign(cols, 0);
    float rest = area.w;
    for (size_t c = 1; c < cols; ++c) {
      fit->widths[c] = natural(c, size) + kPad;
      rest -= fit->widths[c];
    }
    // Column 0 keeps a quarter even when the others leave less (the table then runs past the
    // area's right edge, and fits_width says how wide it needed to be).
    fit->widths[0] = std::max(rest, area.w / 4);
    const bool room = cols == 1 || rest >= area.w / 4;
    fit->names.clear();
    const float line = size * 1.25f;
    fit->height = size * 1.8f;  // the header
    for (const auto& r : spec.rows) {
      fit->names.push_back(wrap_text(r[0], size, fit->widths[0] - kPad, 2));
      if (fit->names.back().empty()) fit->names.back().emplace_back();  // an empty name: one blank line
      fit->height += static_cast<float>(fit->names.back().size()) * line + size * 0.6f;
    }
    return room && fit->height <= area.h;
  };
  Fit fit;
  bool ok = false;
  for (float size = std::max(spec.largest, kLabelMin); size >= kLabelMin && !ok; size -= 2) ok = fit_at(size, &fit);
  if (!ok) fit_at(kLabelMin, &fit);  // too many rows: the ones that fit, then "… N more"
  out.size = fit.size;
  float others = 0;
  for (size_t c = 1; c < cols; ++c) others += fit.widths[c];
  out.fits_width = cols > 1 ? others * 4 / 3 : 0;
  const float size = fit.size, line = size * 1.25f;
  // A short table: rows spaced out (up to 1.2 x the type size more each), the whole table
  // centred in the height it is given, so the slide is not a strip of text over a gap.
  const float spare = ok && spec.spread ? area.h - fit.height : 0.0f;
  const float extra = spec.rows.empty() ? 0.0f : std::min(size * 1.2f, spare / static_cast<float>(spec.rows.size()));
  const float top = area.y + (ok ? (spare - extra * static_cast<float>(spec.rows.size())) / 2 : 0.0f);

  auto x_of = [&](size_t c) {
    float x = area.x;
    for (size_t k = 0; k < c; ++k) x += fit.widths[k];
    return x;
  };
  auto anchor_x = [&](size_t c) {
    const float x = x_of(c);
    const float w = fit.widths[c] - (c + 1 == cols ? 0 : kPad);
    return align(c) == Anchor::End ? x + w : align(c) == Anchor::Middle ? x + w / 2 : x;
  };
  float y = top + size * 0.7f;
  for (size_t c = 0; c < cols; ++c)
    f.text(anchor_x(c), y, fit_text(spec.header[c], size, fit.widths[c] - kPad * 0.5f, true), size, th.muted,
           align(c), true, "label");
  y += size * 0.8f;
  f.line(area.x, y, area.right(), y, th.frame, 2);
  y += size * 0.3f;
  const float more_h = line + size * 0.6f;
  for (size_t r = 0; r < spec.rows.size(); ++r) {
    const auto& names = fit.names[r];
    const float h = static_cast<float>(names.size()) * line + size * 0.6f + extra;
    const bool last = r + 1 == spec.rows.size();
    // (a spread table ends exactly at the bottom: allow for the sums' rounding)
    if (y + h > area.bottom() + 0.5f || (!last && !ok && y + h + more_h > area.bottom())) {
      f.text(area.x, y + more_h / 2, "… " + std::to_string(spec.rows.size() - r) + " " + spec.more_rows, size,
             th.muted, Anchor::Start, false, "note");
      y += more_h;
      break;
    }
    if (r % 2 == 1) f.box({area.x - 12, y, area.w + 24, h}, mix(th.background, th.muted, 0.10f));
    std::vector<size_t> cells;
    const float mid = y + h / 2;
    const float first = mid - static_cast<float>(names.size() - 1) * line / 2;
    cells.push_back(f.items.size());
    for (size_t i = 0; i < names.size(); ++i)
      f.text(area.x, first + static_cast<float>(i) * line, names[i], size, th.text, Anchor::Start, bold(0), "label");
    for (size_t c = 1; c < cols; ++c) {
      cells.push_back(f.items.size());
      f.text(anchor_x(c), mid, spec.rows[r][c], size, c + 1 == cols ? th.text : th.muted, align(c), bold(c),
             c + 1 == cols ? "value" : "label");
    }
    out.cells.push_back(std::move(cells));
    ++out.rows_shown;
    y += h;
  }
  out.bottom = y;
  return out;
}

}  // namespace attnsim::figure
