#include "checked.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "error.h"

namespace attnsim {

namespace {

const std::string kMax = std::to_string(std::numeric_limits<int64_t>::max());

[[noreturn]] void overflow(std::string_view what, const std::string& expr) {
  throw Error(std::string(what) + ": " + expr + " does not fit in 64 bits (max " + kMax + ")");
}

}  // namespace

int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) overflow(what, std::to_string(a) + " × " + std::to_string(b));
  return r;
}

int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) overflow(what, std::to_string(a) + " + " + std::to_string(b));
  return r;
}

int64_t checked_product(const std::vector<int64_t>& factors, std::string_view what) {
  int64_t r = 1;
  bool wrapped = false;
  for (int64_t f : factors) wrapped = wrapped || __builtin_mul_overflow(r, f, &r);
  if (wrapped) {
    std::string expr;
    for (int64_t f : factors) expr += (expr.empty() ? "" : " × ") + std::to_string(f);
    overflow(what, expr);
  }
  return r;
}

int64_t checked_product(std::initializer_list<int64_t> factors, std::string_view what) {
  return checked_product(std::vector<int64_t>(factors), what);
}

void check_range(int64_t v, std::string_view what, int64_t lo, int64_t hi) {
  if (v < lo || v > hi)
    throw Error(std::string(what) + " " + std::to_string(v) + " is out of range (" + std::to_string(lo) + " to " +
                std::to_string(hi) + ")");
}

int64_t parse_int(std::string_view text, std::string_view what, int64_t lo, int64_t hi) {
  const std::string s(text);
  const auto range = [&] {
    return " (" + std::to_string(lo) + " to " + std::to_string(hi) + ")";
  };
  if (s.empty()) throw Error(std::string(what) + " is empty; want a whole number" + range());
  // strtoll skips leading spaces and accepts '+': take only [-]digits.
  size_t i = s[0] == '-' ? 1 : 0;
  bool digits = i < s.size();
  for (size_t k = i; k < s.size(); ++k) digits = digits && s[k] >= '0' && s[k] <= '9';
  if (!digits) throw Error(std::string(what) + " '" + s + "' is not a whole number" + range());
  errno = 0;
  const long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE) throw Error(std::string(what) + " " + s + " is out of range" + range());
  check_range(v, what, lo, hi);
  return v;
}

uint64_t parse_seed(std::string_view text, std::string_view what) {
  const std::string s(text);
  const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
  errno = 0;
  const unsigned long long v = digits ? std::strtoull(s.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE)
    throw Error(std::string(what) + " '" + s + "' is not a seed (a whole number from 0 to 18446744073709551615)");
  return v;
}

namespace {
std::string real_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}
std::string range_text(RealRange r) {
  return " (" + std::string(r.lo_open ? "above " : "from ") + real_text(r.lo) + ", at most " + real_text(r.hi) + ")";
}
}  // namespace

void check_real(double v, std::string_view what, RealRange r) {
  if (!std::isfinite(v) || (r.lo_open ? !(v > r.lo) : !(v >= r.lo)) || !(v <= r.hi))
    throw Error(std::string(what) + " " + real_text(v) + " is out of range" + range_text(r));
}

double parse_real(std::string_view text, std::string_view what, RealRange r) {
  const std::string s(text);
  // the grammar by hand: strtod would also take " 1", "+1", "0x1p3", "nan", "inf" and "1e"
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  bool ok = digits();
  if (ok && i < s.size() && s[i] == '.') {
    ++i;
    ok = digits();
  }
  if (ok && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    ok = digits();
  }
  if (!ok || i != s.size())
    throw Error(std::string(what) + " '" + s + "' is not a number" + range_text(r));
  const double v = std::strtod(s.c_str(), nullptr);  // 1e400 gives inf: refused by the range
  if (!std::isfinite(v)) throw Error(std::string(what) + " " + s + " is out of range" + range_text(r));
  check_real(v, what, r);
  return v;
}

}  // namespace attnsim
