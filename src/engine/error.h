// attnsim::Error — the one exception type the engine throws.
//
// Every failure a user can cause (bad config, malformed .npy, a size that would not fit)
// becomes an Error with one readable line. Front ends catch it at their boundary: the CLI
// prints the line and exits 2, the app shows it in a banner and keeps running.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace attnsim {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A message made safe to print as one line: control characters from user text (a newline in
// a path, a mask spec, a .npy descr) become visible escapes (\n, \t, \x1b), so a message is
// always exactly one line and cannot move the terminal's cursor.
inline std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace attnsim
