// Closeness of lesson sentences to the article's. See closeness.h.
#include "lessons/closeness.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include "engine/error.h"

namespace attnsim::lessons {

namespace {

// The UTF-8 code points of s (an invalid byte stands for itself: lesson files are checked
// UTF-8 elsewhere).
std::vector<char32_t> code_points(const std::string& s) {
  std::vector<char32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    char32_t cp = n == 1 ? c : c & (0x3F >> (n - 1));
    for (int k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += static_cast<size_t>(n);
  }
  return out;
}

std::string utf8(char32_t cp) {
  std::string o;
  if (cp < 0x80) o += static_cast<char>(cp);
  else if (cp < 0x800) o += static_cast<char>(0xC0 | (cp >> 6)), o += static_cast<char>(0x80 | (cp & 0x3F));
  else if (cp < 0x10000)
    o += static_cast<char>(0xE0 | (cp >> 12)), o += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
        o += static_cast<char>(0x80 | (cp & 0x3F));
  else
    o += static_cast<char>(0xF0 | (cp >> 18)), o += static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
        o += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), o += static_cast<char>(0x80 | (cp & 0x3F));
  return o;
}

bool is_hangul(char32_t c) { return c >= 0xAC00 && c <= 0xD7A3; }
bool is_wording(char32_t c) {
  return is_hangul(c) || (c < 0x80 && (std::isalnum(static_cast<int>(c)) || c == '_' || c == '#'));
}
bool is_space(char32_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x3000 || c == 0xA0; }
bool is_operator(char32_t c) { return c == U'×' || c == U'=' || c == U'÷'; }

uint32_t fnv1a32(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

}  // namespace

std::string unmark(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const bool value = text.compare(i, 7, "{value:") == 0;
    const size_t body = value ? i + 7 : text.compare(i, 7, "{quote:") == 0 ? i + 7 : text.compare(i, 6, "{math:") == 0 ? i + 6 : 0;
    const size_t close = body ? text.find('}', body) : std::string::npos;
    if (close == std::string::npos) {
      out += text[i++];
      continue;
    }
    out += value ? "#" : text.substr(body, close - body);
    i = close + 1;
  }
  return out;
}

std::vector<std::string> split_sentences(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (cur.find_first_not_of(" \t\r") != std::string::npos) out.push_back(cur);
    cur.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      flush();
      continue;
    }
    cur += c;
    if ((c == '.' || c == '?' || c == '!') && (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')) flush();
  }
  flush();
  return out;
}

std::vector<uint32_t> sentence_grams(const std::string& sentence) {
  // words; a formula's words are dropped
  std::vector<std::vector<char32_t>> words(1);
  for (char32_t c : code_points(sentence)) {
    if (is_space(c)) {
      if (!words.back().empty()) words.emplace_back();
    } else {
      words.back().push_back(c);
    }
  }
  std::vector<bool> drop(words.size(), false);
  for (size_t i = 0; i < words.size(); ++i) {
    if (std::none_of(words[i].begin(), words[i].end(), is_operator)) continue;
    drop[i] = true;
    if (words[i].size() == 1) {  // a lone operator: its operands go too
      if (i > 0) drop[i - 1] = true;
      if (i + 1 < words.size()) drop[i + 1] = true;
    }
  }
  std::vector<char32_t> kept;
  for (size_t i = 0; i < words.size(); ++i)
    if (!drop[i])
      for (char32_t c : words[i])
        if (is_wording(c)) kept.push_back(c);
  std::vector<uint32_t> grams;
  for (size_t i = 0; i + 3 <= kept.size(); ++i) {
    if (!is_hangul(kept[i]) && !is_hangul(kept[i + 1]) && !is_hangul(kept[i + 2])) continue;
    grams.push_back(fnv1a32(utf8(kept[i]) + utf8(kept[i + 1]) + utf8(kept[i + 2])));
  }
  std::sort(grams.begin(), grams.end());
  grams.erase(std::unique(grams.begin(), grams.end()), grams.end());
  return grams;
}

ArticleGrams parse_article_grams(const std::string& text) {
  ArticleGrams a;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::vector<uint32_t> grams;
    for (std::string w; words >> w;) {
      unsigned v = 0;
      int used = 0;
      if (w.size() != 8 || std::sscanf(w.c_str(), "%8x%n", &v, &used) != 1 || used != 8)
        throw Error("article grams, line " + std::to_string(n) + ": '" + w + "' is not 8 hex digits");
      grams.push_back(v);
    }
    std::sort(grams.begin(), grams.end());
    a.sentences.push_back(std::move(grams));
  }
  return a;
}

double closeness(const std::vector<uint32_t>& grams, const ArticleGrams& article) {
  if (grams.empty()) return 0;
  size_t best = 0;
  for (const auto& s : article.sentences) {
    size_t shared = 0;
    for (uint32_t g : grams) shared += std::binary_search(s.begin(), s.end(), g) ? 1 : 0;
    best = std::max(best, shared);
  }
  return static_cast<double>(best) / static_cast<double>(grams.size());
}

}  // namespace attnsim::lessons
