// Number cards. See number_cards.h.
#include "figure/number_cards.h"

#include <algorithm>

#include "figure/slide.h"
#include "figure/text_metrics.h"

namespace attnsim::figure {

namespace {

constexpr float kPad = 32;     // inside a card
constexpr float kBar = 10;     // the accent bar on a card's left edge
constexpr float kGap = 28;     // between cards
constexpr float kHeader = 56;  // the header line over the cards
constexpr float kNameSize = 36;

std::string details_of(const std::vector<std::string>& row) {
  std::string s;
  for (size_t c = 1; c + 1 < row.size(); ++c)
    if (!row[c].empty()) s += (s.empty() ? "" : "  ·  ") + row[c];
  return s;
}

}  // namespace

bool add_number_cards(Figure& f, const Theme& th, const Rect& area, const TableSpec& spec) {
  check_rows(spec);
  const size_t cols = spec.header.size();
  const size_t n = spec.rows.size();
  if (n == 0 || n > kMaxCards || cols < 2) return false;
  const float inner = area.w - kBar - 2 * kPad;
  // The largest value size at which every value takes at most 60 % of a card and the cards
  // fit the height.
  struct Card {
    std::vector<std::string> name, details;
    float text_h = 0, height = 0;  // the name and detail lines; the card
  };
  std::vector<Card> cards(n);
  float value_size = 0;
  for (float size = kCardValueMax; size >= kCardValueMin && value_size == 0; size -= 4) {
    float widest = 0;
    for (const auto& r : spec.rows) widest = std::max(widest, text_width(r.back(), size, true));
    if (widest > inner * 0.6f) continue;
    const float text_w = inner - widest - kPad;
    float total = kHeader + static_cast<float>(n - 1) * kGap;
    for (size_t i = 0; i < n; ++i) {
      cards[i].name = wrap_text(spec.rows[i][0], kNameSize, text_w, 2);
      const std::string d = details_of(spec.rows[i]);
      cards[i].details = d.empty() ? std::vector<std::string>{} : wrap_text(d, kLabelMin, text_w, 2);
      cards[i].text_h = static_cast<float>(cards[i].name.size()) * kNameSize * 1.3f +
                        static_cast<float>(cards[i].details.size()) * kLabelMin * 1.3f;
      cards[i].height = std::max(cards[i].text_h, size * 1.2f) + 2 * kPad;
      total += cards[i].height;
    }
    if (total > area.h) continue;
    value_size = size;
  }
  if (value_size == 0) return false;

  float total = kHeader + static_cast<float>(n - 1) * kGap;
  for (const Card& c : cards) total += c.height;
  float y = area.y + (area.h - total) / 2;
  f.text(area.right(), y + kHeader / 2 - 8, fit_text(spec.header.back(), kLabelMin, area.w, true), kLabelMin,
         th.muted, Anchor::End, true, "label");
  y += kHeader;
  for (size_t i = 0; i < n; ++i) {
    const Card& c = cards[i];
    f.box({area.x, y, area.w, c.height}, mix(th.background, th.muted, 0.08f));
    f.box({area.x, y, kBar, c.height}, th.accent);
    const float x = area.x + kBar + kPad;
    float ty = y + (c.height - c.text_h) / 2;
    for (const auto& line : c.name) {
      f.text(x, ty + kNameSize * 0.65f, line, kNameSize, th.text, Anchor::Start, false, "label");
      ty += kNameSize * 1.3f;
    }
    for (const auto& line : c.details) {
      f.text(x, ty + kLabelMin * 0.65f, line, kLabelMin, th.muted, Anchor::Start, false, "label");
      ty += kLabelMin * 1.3f;
    }
    f.text(area.right() - kPad, y + c.height / 2, spec.rows[i].back(), value_size, th.text, Anchor::End, true,
           "value");
    y += c.height + kGap;
  }
  return true;
}

}  // namespace attnsim::figure
