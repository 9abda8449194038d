// Light markup. See markup.h.
#include "lessons/markup.h"

#include <sstream>

namespace attnsim::lessons {

namespace {

std::vector<Span> parse_spans(const std::string& line) {
  std::vector<Span> spans;
  Span cur;
  auto flush = [&] {
    if (!cur.text.empty()) spans.push_back(cur);
    cur.text.clear();
  };
  for (size_t i = 0; i < line.size(); ++i) {
    const bool quote = line.compare(i, 7, "{quote:") == 0, math = line.compare(i, 6, "{math:") == 0;
    const size_t close = (quote || math) ? line.find('}', i) : std::string::npos;
    if (close != std::string::npos) {
      const size_t start = i + (quote ? 7 : 6);
      if (quote) {
        flush();
        Span q = cur;
        q.quote = true;
        q.text = line.substr(start, close - start);
        spans.push_back(q);
      } else {
        cur.text += line.substr(start, close - start);
      }
      i = close;
    } else if (!cur.code && line.compare(i, 2, "**") == 0) {
      flush();
      cur.bold = !cur.bold;
      ++i;
    } else if (line[i] == '`') {
      flush();
      cur.code = !cur.code;
    } else {
      cur.text += line[i];
    }
  }
  flush();
  return spans;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

}  // namespace

std::vector<Block> parse_markup(const std::string& text) {
  std::vector<Block> blocks;
  std::string para;
  auto flush_para = [&] {
    if (!para.empty()) blocks.push_back(Block{false, parse_spans(para)});
    para.clear();
  };
  std::istringstream in(text);
  std::string raw;
  while (std::getline(in, raw)) {
    const std::string line = trim(raw);
    if (line.empty()) {
      flush_para();
    } else if (line.rfind("- ", 0) == 0) {
      flush_para();
      blocks.push_back(Block{true, parse_spans(line.substr(2))});
    } else {
      para += (para.empty() ? "" : " ") + line;
    }
  }
  flush_para();
  return blocks;
}

std::string plain_text(const std::vector<Block>& blocks) {
  std::string out;
  for (const auto& b : blocks) {
    if (!out.empty()) out += "\n";
    if (b.list_item) out += "• ";
    for (const auto& s : b.spans) out += s.text;
  }
  return out;
}

std::string first_paragraph(const std::string& text) {
  const auto blocks = parse_markup(text);
  if (blocks.empty()) return "";
  return plain_text({blocks.front()});
}

}  // namespace attnsim::lessons
