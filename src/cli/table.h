// A plain text table with columns sized to their widest cell (UTF-8 aware for ᵀ, √, ...).
#pragma once

#include <string>
#include <vector>

namespace attnsim::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace attnsim::cli
