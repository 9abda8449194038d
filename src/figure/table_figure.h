// A table as a figure, in type a classroom can read: the largest size from 40 down to 28
// units at which every column fits the area; the first column (the names) takes the width the
// others leave (at least a quarter) and wraps to two lines; rows that do not fit end in
// "… N more rows"; a short table is spaced out and centred in the height it is given.
// The cost tables (a lesson step's engine figures: what, sizes, value) are drawn with it.
//
//   what                                       sizes                    value
//   ----------------------------------------------------------------------------------
//   parameters of the four projections          d=512 h=8                1,048,576
//   score tensor, one layer                     B=1 T=4096 h=8           536,870,912 B (512 MiB)
#pragma once

#include <string>
#include <vector>

#include "figure/figure.h"
#include "figure/palette.h"
#include "figure/slide.h"

namespace attnsim::figure {

struct TableSpec {
  std::vector<std::string> header;             // one per column
  std::vector<std::vector<std::string>> rows;  // each as many cells as the header
  std::vector<Anchor> align;                   // per column (default Start)
  std::vector<bool> bold;                      // per column (default false): the value column
  std::string more_rows = "more rows";         // "… 3 more rows"
  float largest = 40;                          // the type size tried first (a panel: kLabelMin)
  bool spread = true;                          // a short table spaced out and centred in the
                                               // area (a slide); false: rows packed from the top
};

struct TableLayout {
  float size = 0;                            // the type size chosen
  size_t rows_shown = 0;
  float bottom = 0;                          // where the last row (or "… N more") ends
  float fits_width = 0;                      // the narrowest area in which the columns after
                                             // the first leave it a quarter: a narrower one
                                             // squeezes the names out (a panel widens to it)
  std::vector<std::vector<size_t>> cells;    // [row][column]: the first item index of the cell's
                                             // text (a wrapped name: its first line)
};

// Throws Error when a row's cell count differs from the header's (check_rows).
void check_rows(const TableSpec& spec);
TableLayout add_table(Figure& f, const Theme& th, const Rect& area, const TableSpec& spec);

}  // namespace attnsim::figure
