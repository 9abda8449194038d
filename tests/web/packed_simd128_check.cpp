// The page's packed weight product as the page runs it (packed_weights_simd128.cpp, SIMD128),
// against the plain loop of reference::linear's order: bias + Σ_k x·W in input order, mul then
// add, so bit for bit. Built against the web tree's engine library and run by node
// (tests/web/test_packed_simd128.py); prints "ok ..." or "FAIL ..." per shape, exit 1 on a FAIL,
// and the threads the engine's products may use.
#include <cstdio>
#include <cstring>
#include <vector>

#include "engine/packed_weights.h"
#include "engine/parallel.h"
#include "engine/random.h"

using namespace attnsim;

namespace {

std::vector<float> normal(int64_t n, uint64_t stream) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = random_normal(5, stream, static_cast<uint64_t>(i));
  return v;
}

// y (m,out) = x (m,in) · Wᵀ + bias, one output at a time, as reference::linear sums.
std::vector<float> plain(const std::vector<float>& x, const std::vector<float>& w, const float* bias, int64_t m,
                         int64_t out, int64_t in) {
  std::vector<float> y(static_cast<size_t>(m * out));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < out; ++c) {
      float acc = bias ? bias[c] : 0.0f;
      for (int64_t k = 0; k < in; ++k) acc += x[r * in + k] * w[c * in + k];
      y[r * out + c] = acc;
    }
  return y;
}

}  // namespace

int main() {
  int failed = 0;
  const int64_t shapes[][3] = {{1, 3072, 768}, {2, 40, 300}, {3, 9, 3}, {4, 768, 768}, {5, 33, 256}, {64, 2304, 768},
                               {7, 1, 5}};
  for (const auto& s : shapes)
    for (bool with_bias : {false, true}) {
      const int64_t m = s[0], out = s[1], in = s[2];
      const std::vector<float> x = normal(m * in, 1), w = normal(out * in, 2), b = normal(out, 3);
      const float* bias = with_bias ? b.data() : nullptr;
      const auto packed = pack_weight(w.data(), out, in);
      std::vector<float> y(static_cast<size_t>(m * out), -1.0f);
      packed->linear(x.data(), m, bias, y.data());
      const std::vector<float> want = plain(x, w, bias, m, out, in);
      const bool same = std::memcmp(y.data(), want.data(), y.size() * sizeof(float)) == 0;
      const bool sized = packed->out() == out && packed->in() == in && packed->bytes() == packed_weight_bytes(out, in) &&
                         packed->bytes() == (out + 7) / 8 * 8 * in * 4;
      std::printf("%s m %lld out %lld in %lld bias %d: %s\n", same && sized ? "ok  " : "FAIL", static_cast<long long>(m),
                  static_cast<long long>(out), static_cast<long long>(in), with_bias ? 1 : 0,
                  !same ? "differs from the plain loop" : !sized ? "wrong sizes" : "the plain loop's bits");
      failed += !(same && sized);
    }
  std::printf("%s\n", packing_available() ? "packing available" : "FAIL packing_available() is false");
  std::printf("threads %d\n", default_threads());  // a threaded page splits each product's panels between them
  return failed || !packing_available() ? 1 : 0;
}
