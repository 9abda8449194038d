#include "table.h"

#include <cstdio>

namespace attnsim::cli {

// Terminal columns of a UTF-8 string: count code points, not bytes.
static size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

void Table::print() const {
  std::vector<size_t> width;
  for (const auto& row : rows_)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], display_width(row[i]));
    }
  for (size_t r = 0; r < rows_.size(); ++r) {
    std::string line;
    for (size_t i = 0; i < rows_[r].size(); ++i) {
      line += rows_[r][i];
      if (i + 1 < rows_[r].size()) line.append(width[i] - display_width(rows_[r][i]) + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
    if (r == 0) {
      size_t total = 0;
      for (size_t w : width) total += w + 2;
      std::printf("%s\n", std::string(total - 2, '-').c_str());
    }
  }
}

}  // namespace attnsim::cli
