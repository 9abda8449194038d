#include "url_text.h"

namespace attnsim::hub {

std::string without_credentials(std::string_view text) {
  std::string out;
  size_t from = 0;
  for (size_t scheme = text.find("://"); scheme != std::string_view::npos; scheme = text.find("://", from)) {
    const size_t start = scheme + 3;
    size_t end = start;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t' && text[end] != '\n' && text[end] != '\r') ++end;
    const size_t at = text.substr(start, end - start).rfind('@');
    out.append(text.substr(from, start - from));
    if (at != std::string_view::npos) {
      out += "***";
      from = start + at;  // the '@' stays: the reader sees that a credential was there
    } else {
      from = start;
    }
  }
  out.append(text.substr(from));
  return out;
}

}  // namespace attnsim::hub
