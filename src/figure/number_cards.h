// A short table (up to three rows) as number cards: on a slide, a two-row table in body type
// leaves the screen empty, so each row becomes a card whose value is the largest text on it.
//
//   the engine's value                                                  <- the value's header
//   +-----------------------------------------------------------------+
//   | KV cache (h KV heads)                                           |
//   | d=4096 h=32 L=32 B=1 T=4096 fp16        2,147,483,648 B (2 GiB)  |  <- up to 88 units, bold
//   +-----------------------------------------------------------------+
//
// Column 0 is the name, the last column the value, the columns between are joined into the
// muted detail line. The same TableSpec draws as a table (table_figure.h) where cards do not
// fit.
#pragma once

#include "figure/figure.h"
#include "figure/palette.h"
#include "figure/table_figure.h"

namespace attnsim::figure {

inline constexpr size_t kMaxCards = 3;
inline constexpr float kCardValueMax = 88, kCardValueMin = 44;

// Adds the cards, centred in `area`, and returns true; adds nothing and returns false when
// the table has no rows, more than kMaxCards, fewer than two columns, or when the values do
// not fit at kCardValueMin. Throws Error when a row's cell count differs from the header's.
bool add_number_cards(Figure& f, const Theme& theme, const Rect& area, const TableSpec& spec);

}  // namespace attnsim::figure
