// Checked sizes: every count that comes from outside (CLI numbers, .npy headers, lessons,
// scenarios, checkpoints, model and decode configs) is hostile. Products and sums of such
// counts go through here, so they never wrap: a result that would not fit in int64 is an
// Error that names the numbers ("score elements B·h·Tq·Tk: 1 × 8 × 1099511627776 ×
// 1099511627776 does not fit in 64 bits (max 9223372036854775807)").
//
// Two ways in:
//   checked_product({B, h, Tq, Tk}, "score elements B·h·Tq·Tk")   a named product
//   Size(B) * h * Tq * Tk                                          expressions (predictions,
//                                                                   cost): each step checked
// and parse_int() for numbers given as text (no clamping, no sign flip, no junk).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace attnsim {

// a·b, a+b, or Error "<what>: a × b does not fit in 64 bits".
int64_t checked_mul(int64_t a, int64_t b, std::string_view what = "size");
int64_t checked_add(int64_t a, int64_t b, std::string_view what = "size");
// Product of every factor; the Error lists all of them.
int64_t checked_product(std::initializer_list<int64_t> factors, std::string_view what);
int64_t checked_product(const std::vector<int64_t>& factors, std::string_view what);

// A decimal integer in [lo, hi], the whole of `text`: "--tq 99999999999999999999 is out of
// range (1 to 9223372036854775807)", "--seed -1 ...". `what` names the option.
int64_t parse_int(std::string_view text, std::string_view what, int64_t lo, int64_t hi);
// Error unless lo <= v <= hi, same wording as parse_int.
void check_range(int64_t v, std::string_view what, int64_t lo, int64_t hi);

// A seed: the whole text digits, 0 to 2^64-1 (no sign: "-1" would wrap to 2^64-1).
uint64_t parse_seed(std::string_view text, std::string_view what);

// The range of a real-valued setting (a learning rate, a weight decay): finite, lo < v (or
// lo <= v) and v <= hi. Every reader of such a setting (the CLI's options, a checkpoint's
// recorded recipe, the trainer) checks it against the same RealRange.
struct RealRange {
  double lo, hi;
  bool lo_open = false;  // true: lo itself is refused (a learning rate of 0)
};
// A decimal real, the whole of `text`: [-]digits[.digits][e[+|-]digits] (no spaces, '+', hex,
// "nan" or "inf"), then check_real.
double parse_real(std::string_view text, std::string_view what, RealRange range);
// Error "<what> -1 is out of range (above 0, at most 10)"; NaN and infinities are refused.
void check_real(double v, std::string_view what, RealRange range);

// A non-negative count whose arithmetic is checked; converts back with value().
class Size {
 public:
  Size(int64_t v = 0) : v_(v) {}  // implicit: Size(B) * h * T reads like the formula
  int64_t value() const { return v_; }
  friend Size operator*(Size a, Size b) { return Size(checked_mul(a.v_, b.v_)); }
  friend Size operator+(Size a, Size b) { return Size(checked_add(a.v_, b.v_)); }
  Size& operator*=(Size b) { return *this = *this * b; }
  Size& operator+=(Size b) { return *this = *this + b; }
  friend bool operator<(Size a, Size b) { return a.v_ < b.v_; }
  friend bool operator>(Size a, Size b) { return a.v_ > b.v_; }

 private:
  int64_t v_;
};

}  // namespace attnsim
