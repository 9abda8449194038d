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

namespace {

// The code point of the UTF-8 character ending at text[end - 1]; 0 when it is not one.
char32_t last_code_point(const std::string& text, size_t end, size_t* begin = nullptr) {
  if (end == 0) return 0;
  size_t b = end - 1;
  while (b > 0 && (static_cast<unsigned char>(text[b]) & 0xC0) == 0x80) --b;
  const auto* u = reinterpret_cast<const unsigned char*>(text.data() + b);
  const size_t n = end - b;
  char32_t cp = 0;
  if (n == 1 && u[0] < 0x80) cp = u[0];
  else if (n == 2 && (u[0] & 0xE0) == 0xC0) cp = ((u[0] & 0x1F) << 6) | (u[1] & 0x3F);
  else if (n == 3 && (u[0] & 0xF0) == 0xE0) cp = ((u[0] & 0x0F) << 12) | ((u[1] & 0x3F) << 6) | (u[2] & 0x3F);
  else if (n == 4 && (u[0] & 0xF8) == 0xF0)
    cp = ((u[0] & 0x07) << 18) | ((u[1] & 0x3F) << 12) | ((u[2] & 0x3F) << 6) | (u[3] & 0x3F);
  if (begin) *begin = b;
  return cp;
}

// The first code point at text[at] and its byte length.
char32_t code_point_at(const std::string& text, size_t at, size_t* length) {
  *length = 0;
  if (at >= text.size()) return 0;
  const auto c = static_cast<unsigned char>(text[at]);
  const size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
  if (at + n > text.size()) return 0;
  *length = n;
  size_t b = 0;
  return last_code_point(text, at + n, &b);
}

bool is_hangul(char32_t cp) { return cp >= 0xAC00 && cp <= 0xD7A3; }

// Sino-Korean digits: 영 일 이 삼 사 오 육 칠 팔 구.
constexpr FinalSound kDigitSound[10] = {FinalSound::Consonant, FinalSound::Rieul,     FinalSound::Vowel,
                                        FinalSound::Consonant, FinalSound::Vowel,     FinalSound::Vowel,
                                        FinalSound::Consonant, FinalSound::Rieul,     FinalSound::Rieul,
                                        FinalSound::Vowel};

// An integer written with digits only: its last digit, or the place its trailing zeros name.
FinalSound integer_sound(const std::string& digits) {
  if (digits.empty()) return FinalSound::Unknown;
  const int last = digits.back() - '0';
  if (last != 0) return kDigitSound[last];
  size_t zeros = 0;
  while (zeros < digits.size() && digits[digits.size() - 1 - zeros] == '0') ++zeros;
  if (zeros == digits.size()) return FinalSound::Consonant;  // 0: 영
  // 십 백 천 (consonants) within a group of four; the group's own name at 4, 8, 12, 16 zeros:
  // 만 억 (consonants), 조 (a vowel), 경 (a consonant).
  if (zeros % 4 != 0) return FinalSound::Consonant;
  return zeros / 4 == 3 ? FinalSound::Vowel : FinalSound::Consonant;
}

}  // namespace

FinalSound korean_final_sound(const std::string& figure) {
  size_t end = figure.size();
  while (end > 0 && figure[end - 1] == ' ') --end;
  if (end == 0) return FinalSound::Unknown;
  size_t begin = 0;
  const char32_t cp = last_code_point(figure, end, &begin);
  if (is_hangul(cp)) {
    const int jong = static_cast<int>((cp - 0xAC00) % 28);
    return jong == 0 ? FinalSound::Vowel : jong == 8 ? FinalSound::Rieul : FinalSound::Consonant;
  }
  const std::string head = figure.substr(0, end);
  if (head.back() == '%') return FinalSound::Vowel;  // 퍼센트
  if (head.back() == ')') {                          // a tuple: its last number
    const size_t open = head.rfind('(');
    const size_t comma = head.rfind(',');
    const size_t from = comma != std::string::npos && (open == std::string::npos || comma > open) ? comma + 1
                        : open != std::string::npos                                              ? open + 1
                                                                                                 : 0;
    return korean_final_sound(head.substr(from, head.size() - 1 - from));
  }
  for (const auto& u : kByteUnits)
    if (head.size() >= std::strlen(u.name) && head.compare(head.size() - std::strlen(u.name), std::string::npos, u.name) == 0)
      return FinalSound::Vowel;  // 바이트
  if (head == "B" || (head.size() >= 2 && head.compare(head.size() - 2, 2, " B") == 0)) return FinalSound::Vowel;
  if (head == "NaN") return FinalSound::Consonant;  // 난
  if (!is_digit(head.back())) return FinalSound::Unknown;
  // the number at the end: digits, separators, a decimal point, an exponent
  size_t start = head.size();
  while (start > 0 && (is_digit(head[start - 1]) || head[start - 1] == ',' || head[start - 1] == '.' ||
                       head[start - 1] == 'e' || head[start - 1] == '-' || head[start - 1] == '+'))
    --start;
  std::string number = head.substr(start);
  if (const size_t e = number.find('e'); e != std::string::npos) number = number.substr(e + 1);  // 1e-7: 칠
  while (!number.empty() && !is_digit(number.front())) number.erase(0, 1);
  if (const size_t dot = number.find('.'); dot != std::string::npos)  // 4.68: digit by digit, 팔
    return kDigitSound[number.back() - '0'];
  std::string digits;
  for (char c : number)
    if (is_digit(c)) digits += c;
  return integer_sound(digits);
}

ParticlePair particle_pair_at(const std::string& text, size_t at, size_t* skipped) {
  size_t p = at;
  while (p < text.size() && (text[p] == '*' || text[p] == '`')) ++p;
  if (skipped) *skipped = p - at;
  // consonant form, vowel form
  static const std::pair<const char*, const char*> kPairs[] = {
      {"은", "는"}, {"이", "가"}, {"을", "를"}, {"과", "와"}, {"으로", "로"}};
  for (const auto& [c, v] : kPairs)
    for (const auto& [first, second] : {std::pair{c, v}, std::pair{v, c}}) {
      const std::string written = std::string(first) + "/" + second;
      if (text.compare(p, written.size(), written) == 0) return ParticlePair{written.size(), c, v};
    }
  return ParticlePair{};
}

std::string pick_particle(const ParticlePair& pair, FinalSound sound) {
  switch (sound) {
    case FinalSound::Vowel: return pair.vowel;
    case FinalSound::Consonant: return pair.consonant;
    case FinalSound::Rieul: return pair.consonant == "으로" ? pair.vowel : pair.consonant;
    case FinalSound::Unknown: break;
  }
  return "";
}

std::string bare_copula_at(const std::string& text, size_t at) {
  size_t p = at;
  while (p < text.size() && (text[p] == '*' || text[p] == '`')) ++p;
  if (text.compare(p, std::strlen("였"), "였") == 0) return "였";
  if (text.compare(p, std::strlen("다"), "다") != 0) return "";
  size_t len = 0;  // 다음, 다섯: a word, not the copula
  return is_hangul(code_point_at(text, p + std::strlen("다"), &len)) ? "" : "다";
}

std::string wrong_particle(const std::string& text, size_t at, const std::string& figure, std::string* written) {
  size_t p = at;
  while (p < text.size() && (text[p] == '*' || text[p] == '`')) ++p;
  const FinalSound sound = korean_final_sound(figure);
  if (sound == FinalSound::Unknown || particle_pair_at(text, p).length) return "";
  struct One {
    const char* form;
    ParticlePair pair;
    bool needs_break;  // only a particle when no Hangul follows (이다, 가지, 로그)
  };
  static const One kOnes[] = {
      {"으로", {0, "으로", "로"}, false}, {"은", {0, "은", "는"}, false}, {"는", {0, "은", "는"}, false},
      {"을", {0, "을", "를"}, false},     {"를", {0, "을", "를"}, false}, {"과", {0, "과", "와"}, false},
      {"와", {0, "과", "와"}, false},     {"이", {0, "이", "가"}, true},  {"가", {0, "이", "가"}, true},
      {"로", {0, "으로", "로"}, true}};
  for (const One& o : kOnes) {
    const size_t n = std::strlen(o.form);
    if (text.compare(p, n, o.form) != 0) continue;
    size_t len = 0;
    const char32_t next = code_point_at(text, p + n, &len);
    if (o.needs_break && is_hangul(next)) return "";
    const std::string right = pick_particle(o.pair, sound);
    if (right == o.form) return "";
    if (written) *written = o.form;
    return right;
  }
  return "";
}

std::string fill_marks(const std::string& text, const std::vector<Mark>& marks,
                       const std::vector<std::string>& filled) {
  std::string out;
  size_t at = 0, k = 0;
  for (const Mark& m : marks) {
    out += text.substr(at, m.begin - at);
    at = m.end;
    if (m.kind != Mark::Kind::Value) {
      out += text.substr(m.begin, m.end - m.begin);
      continue;
    }
    const std::string& figure = filled[k++];
    out += figure;
    size_t skipped = 0;
    const ParticlePair pair = particle_pair_at(text, m.end, &skipped);
    if (!pair.length) continue;
    const std::string form = pick_particle(pair, korean_final_sound(figure));
    if (form.empty()) continue;  // kept as written; fill_values reports it
    out += text.substr(m.end, skipped) + form;
    at = m.end + skipped + pair.length;
  }
  return out + text.substr(at);
}

}  // namespace attnsim::lessons
