// Numbers in a lesson's prose. See prose.h for the rules.
#include "lessons/prose.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace attnsim::lessons {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

struct ByteUnit {
  const char* name;
  double factor;
};
constexpr ByteUnit kByteUnits[] = {{"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
                                   {"TiB", 1099511627776.0}, {"KB", 1e3}, {"MB", 1e6},
                                   {"GB", 1e9}, {"TB", 1e12}};

// "%.3g" without the exponent's padding and "+": 1e-07 -> 1e-7, 1.5e+09 -> 1.5e9.
std::string tidy_exponent(std::string s) {
  const size_t e = s.find('e');
  if (e == std::string::npos) return s;
  std::string mant = s.substr(0, e), exp = s.substr(e + 1);
  bool neg = false;
  if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
    neg = exp[0] == '-';
    exp.erase(0, 1);
  }
  while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
  return mant + "e" + (neg ? "-" : "") + exp;
}

std::string with_separators(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", std::fabs(v));
  std::string digits = buf, out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string printf_format(double v, const std::string& spec) {
  char buf[64];
  const std::string f = "%" + spec;
  std::snprintf(buf, sizeof buf, f.c_str(), v);
  return tidy_exponent(buf);
}

std::string format_number(double v, const std::string& format) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const bool integral = std::fabs(v) < 9e15 && v == std::floor(v);
  if (format == ",") return integral ? with_separators(v) : printf_format(v, ".3g");
  if (format == "raw") return integral ? printf_format(v, ".0f") : printf_format(v, ".9g");
  if (format == "%") return printf_format(v * 100, ".3g") + "%";
  for (const auto& u : kByteUnits)
    if (format == u.name) return printf_format(v / u.factor, ".3g") + " " + u.name;
  if (format.size() >= 3 && format[0] == '.') return printf_format(v, format);
  if (integral) return std::fabs(v) < 10000 ? printf_format(v, ".0f") : with_separators(v);
  return printf_format(v, ".3g");
}

}  // namespace

std::vector<Mark> find_marks(const std::string& text,
                             std::vector<std::pair<size_t, std::string>>* problems) {
  static const std::pair<const char*, Mark::Kind> kinds[] = {
      {"{value:", Mark::Kind::Value}, {"{quote:", Mark::Kind::Quote}, {"{math:", Mark::Kind::Math}};
  std::vector<Mark> marks;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') continue;
    bool known = false;
    for (const auto& [prefix, kind] : kinds) {
      const size_t n = std::strlen(prefix);
      if (text.compare(i, n, prefix) != 0) continue;
      known = true;
      const size_t close = text.find('}', i + n);
      if (close == std::string::npos || text.find('\n', i) < close) {
        if (problems) problems->emplace_back(i, std::string("unterminated ") + prefix + "...}");
        break;
      }
      marks.push_back(Mark{kind, text.substr(i + n, close - i - n), i, close + 1});
      i = close;
      break;
    }
    // "{word:" that is none of the three is a typo for one of them.
    if (!known && problems) {
      size_t j = i + 1;
      while (j < text.size() && is_letter(text[j])) ++j;
      if (j > i + 1 && j < text.size() && text[j] == ':')
        problems->emplace_back(i, "unknown mark '" + text.substr(i, j - i + 1) +
                                      "' (known: {value:...}, {quote:...}, {math:...})");
    }
  }
  return marks;
}

std::vector<BareNumber> bare_numbers(const std::string& text) {
  std::vector<BareNumber> out;
  const std::vector<Mark> marks = find_marks(text);
  size_t next_mark = 0;
  for (size_t i = 0; i < text.size();) {
    if (next_mark < marks.size() && i >= marks[next_mark].begin) {
      i = marks[next_mark++].end;
      continue;
    }
    if (!is_digit(text[i])) {
      ++i;
      continue;
    }
    const size_t start = i;
    // A name: float32, W_O, fp16, GPT-3 (a letter or "_" before, or a letter and "-").
    const bool name = start > 0 && (is_letter(text[start - 1]) || text[start - 1] == '_' ||
                                    (text[start - 1] == '-' && start > 1 && is_letter(text[start - 2])));
    // The number: digits, "," or "." followed by a digit, an exponent.
    size_t j = i;
    std::string plain;
    while (j < text.size()) {
      if (is_digit(text[j])) {
        plain += text[j++];
      } else if ((text[j] == ',' || text[j] == '.') && j + 1 < text.size() && is_digit(text[j + 1])) {
        if (text[j] == '.') plain += '.';
        ++j;
      } else {
        break;
      }
    }
    if (j + 1 < text.size() && (text[j] == 'e' || text[j] == 'E')) {
      size_t k = j + 1;
      if (k < text.size() && (text[k] == '-' || text[k] == '+')) ++k;
      if (k < text.size() && is_digit(text[k])) {
        plain += 'e';
        plain += text.substr(j + 1, k - j - 1);
        while (k < text.size() && is_digit(text[k])) plain += text[k++];
        j = k;
      }
    }
    const std::string token = text.substr(start, j - start);
    i = j;
    if (name) continue;
    if (token == "0" || token == "1") {
      // A bare 0 or 1 is arithmetic, not a figure, unless it carries a percent sign.
      if (!(j < text.size() && text[j] == '%')) continue;
    }
    out.push_back(BareNumber{start, token, std::strtod(plain.c_str(), nullptr)});
  }
  return out;
}

ValueRef parse_value_ref(const std::string& body) {
  const size_t bar = body.find('|');
  if (bar == std::string::npos) return ValueRef{body, ""};
  return ValueRef{body.substr(0, bar), body.substr(bar + 1)};
}

bool is_known_format(const std::string& f, std::string* why) {
  if (f.empty() || f == "," || f == "raw" || f == "%") return true;
  for (const auto& u : kByteUnits)
    if (f == u.name) return true;
  if (f.size() >= 3 && f[0] == '.' && is_digit(f[1]) && f.size() == 3 &&
      (f[2] == 'f' || f[2] == 'e' || f[2] == 'g'))
    return true;
  if (why)
    *why = "unknown format '" + f + "' (known: , raw % .Nf .Ne .Ng KiB MiB GiB TiB KB MB GB TB)";
  return false;
}

std::string format_for_prose(const Value& value, const std::string& format) {
  if (const double* d = std::get_if<double>(&value)) return format_number(*d, format);
  if (const auto* l = std::get_if<std::vector<int64_t>>(&value)) {
    std::string s = "(";
    for (size_t i = 0; i < l->size(); ++i) s += (i ? ", " : "") + std::to_string((*l)[i]);
    return s + ")";
  }
  return std::get<std::string>(value);
}

std::string fill_marks(const std::string& text, const std::vector<Mark>& marks,
                       const std::vector<std::string>& filled) {
  std::string out;
  size_t at = 0, k = 0;
  for (const Mark& m : marks) {
    out += text.substr(at, m.begin - at);
    if (m.kind == Mark::Kind::Value) out += filled[k++];
    else out += text.substr(m.begin, m.end - m.begin);
    at = m.end;
  }
  return out + text.substr(at);
}

}  // namespace attnsim::lessons
