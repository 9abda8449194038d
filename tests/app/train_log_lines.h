// A run's train_log.jsonl as JSON lines, read the plain way: what the app tests compare the
// views' own readers against.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attnsim::test {

inline std::vector<nlohmann::json> train_log_lines(const std::string& run) {
  std::ifstream in(run + "/train_log.jsonl");
  std::vector<nlohmann::json> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace attnsim::test
