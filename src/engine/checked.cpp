#include "checked.h"

#include <cerrno>
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

}  // namespace attnsim
