// attnsim::Error — the one exception type the engine throws.
//
// Every failure a user can cause (bad config, malformed .npy, a size that would not fit)
// becomes an Error with one readable line. Front ends catch it at their boundary: the CLI
// prints the line and exits 2, the app shows it in a banner and keeps running.
#pragma once

#include <stdexcept>
#include <string>

namespace attnsim {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace attnsim
