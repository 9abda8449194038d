// packed_weights.h on the desktop: oneDNN 2.6's matmul (Debian's libdnnl-dev).
//
// oneDNN names the product y (M,N) = src (M,K) · weights (K,N) + bias (1,N). A torch weight
// W (out, in) row-major is weights (K = in, N = out) in format "ba".
//
// The weight is cut into column panels (blocks of `out`, kPanels of them at most, each a
// multiple of 64 wide), and each panel is reordered once into the layout matmul prefers for it
// (format_tag::any; on AVX-512 the blocked format its brgemm kernel reads without packing).
// linear() hands the panels to the engine's threads (parallel.h) as they come free, each panel
// run single-threaded by oneDNN: on a shared 2-core machine, oneDNN's own OpenMP split waits
// for its slowest thread (measured: 6x slower than alone while another process held a core),
// where panels taken from a counter let the free core take more. Each row count M gets its
// own primitive per panel, made on first use against the same packed layout and kept.
#include "packed_weights.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "checked.h"
#include "error.h"
#include "parallel.h"

namespace attnsim {

namespace {

using dnnl::memory;
using Dt = memory::data_type;
using Tag = memory::format_tag;

// The row count the packed layout is chosen for: GPT-2's 64-token benchmark. The layout of
// oneDNN 2.6's f32 brgemm weights depends on K, N and the ISA, not on M (checked for M = 1,
// 3, 7, 64, 65), so every M reuses it.
constexpr int64_t kLayoutRows = 64;
// Panels per weight at most, and their width's multiple (the brgemm kernel's block of N).
// Eight give two threads work to balance; more cost each call a dispatch per panel.
constexpr int64_t kPanels = 8, kPanelAlign = 64;
// Primitives kept per panel; past this, the oldest row count is dropped (the app runs
// prompts of many lengths).
constexpr size_t kKeptRowCounts = 8;

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// A stream per thread (linear may run on the app's worker too); oneDNN's OpenMP is held to
// the calling thread, since the panels are spread over the engine's threads instead.
dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream = [] {
    omp_set_num_threads(1);
    return dnnl::stream(cpu_engine());
  }();
  return stream;
}

// The torch weight's rows [first, first + count) as oneDNN's (K, N) in the given format.
memory::desc weight_desc(int64_t count, int64_t in, Tag tag) { return memory::desc({in, count}, Dt::f32, tag); }

dnnl::matmul::primitive_desc matmul_desc(int64_t m, const memory::desc& weights, int64_t count, int64_t in, bool bias) {
  const memory::desc src({m, in}, Dt::f32, Tag::ab), dst({m, count}, Dt::f32, Tag::ab);
  const dnnl::matmul::desc d = bias ? dnnl::matmul::desc(src, weights, memory::desc({1, count}, Dt::f32, Tag::ab), dst)
                                    : dnnl::matmul::desc(src, weights, dst);
  return dnnl::matmul::primitive_desc(d, cpu_engine());
}

// The packed layout of a (count, in) panel: what matmul picks for weights of "any" format.
memory::desc packed_desc(int64_t count, int64_t in) {
  return matmul_desc(kLayoutRows, weight_desc(count, in, Tag::any), count, in, true).weights_desc();
}

int64_t panel_width(int64_t out) {
  const int64_t w = (out + kPanels - 1) / kPanels;
  return std::min(out, (w + kPanelAlign - 1) / kPanelAlign * kPanelAlign);
}

// oneDNN's dims are int64 but its kernels index with int: both sides below 2^31, and the
// weight's float32 bytes must fit in int64 (the sizes come from a model's config: hostile).
void check_shape(int64_t out, int64_t in) {
  check_range(out, "packed weight rows (out)", 1, INT32_MAX);
  check_range(in, "packed weight columns (in)", 1, INT32_MAX);
  (void)checked_product({out, in, 4}, "packed weight bytes out·in·4");
}

// Rows [first, first + count) of W, packed.
class Panel {
 public:
  Panel(const float* w, int64_t first, int64_t count, int64_t in)
      : first_(first), count_(count), in_(in), packed_(packed_desc(count, in), cpu_engine()) {
    memory plain(weight_desc(count, in, Tag::ba), cpu_engine(), const_cast<float*>(w + first * in));  // read only
    dnnl::reorder(plain, packed_).execute(thread_stream(), plain, packed_);
    thread_stream().wait();
  }

  int64_t first() const { return first_; }
  int64_t count() const { return count_; }
  int64_t bytes() const { return static_cast<int64_t>(packed_.get_desc().get_size()); }

  // dst (m,count), dense = x (m,in) · panelᵀ + bias[first..]
  void run(const float* x, int64_t m, const float* bias, float* dst) const {
    const dnnl::engine& e = cpu_engine();
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory({{m, in_}, Dt::f32, Tag::ab}, e, const_cast<float*>(x))},
                                         {DNNL_ARG_WEIGHTS, packed_},
                                         {DNNL_ARG_DST, memory({{m, count_}, Dt::f32, Tag::ab}, e, dst)}};
    if (bias) args.emplace(DNNL_ARG_BIAS, memory({{1, count_}, Dt::f32, Tag::ab}, e, const_cast<float*>(bias + first_)));
    primitive(m, bias != nullptr).execute(thread_stream(), args);  // oneDNN reads src and bias, never writes them
    thread_stream().wait();
  }

 private:
  struct Kept {
    int64_t m;
    bool bias;
    dnnl::matmul primitive;
  };

  // A handle (reference counted): another thread may drop its entry meanwhile.
  dnnl::matmul primitive(int64_t m, bool bias) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Kept& k : kept_)
      if (k.m == m && k.bias == bias) return k.primitive;
    if (kept_.size() == kKeptRowCounts) kept_.erase(kept_.begin());
    kept_.push_back({m, bias, dnnl::matmul(matmul_desc(m, packed_.get_desc(), count_, in_, bias))});
    return kept_.back().primitive;
  }

  int64_t first_, count_, in_;
  memory packed_;  // owns the packed bytes
  mutable std::mutex mutex_;
  mutable std::vector<Kept> kept_;
};

class DnnlPackedWeight final : public PackedWeight {
 public:
  DnnlPackedWeight(const float* w, int64_t out, int64_t in) : out_(out), in_(in) {
    for (int64_t first = 0, width = panel_width(out); first < out; first += width)
      panels_.push_back(std::make_unique<const Panel>(w, first, std::min(width, out - first), in));
  }

  int64_t out() const override { return out_; }
  int64_t in() const override { return in_; }
  int64_t bytes() const override {
    int64_t b = 0;
    for (const auto& p : panels_) b += p->bytes();
    return b;
  }

  // y (m,out) = x (m,in) · Wᵀ + bias: each panel into a dense scratch (m,count) of its
  // thread, then into its columns of y. One panel writes y directly.
  void linear(const float* x, int64_t m, const float* bias, float* y) const override {
    check_range(m, "packed linear rows", 1, INT32_MAX);
    if (panels_.size() == 1) return panels_.front()->run(x, m, bias, y);
    parallel_for(static_cast<int64_t>(panels_.size()), 1, [&](int64_t begin, int64_t end) {
      thread_local std::vector<float> scratch;  // kept: no allocation once it has grown
      for (int64_t i = begin; i < end; ++i) {
        const Panel& p = *panels_[static_cast<size_t>(i)];
        scratch.resize(std::max(scratch.size(), static_cast<size_t>(m * p.count())));
        p.run(x, m, bias, scratch.data());
        for (int64_t r = 0; r < m; ++r)
          std::memcpy(y + r * out_ + p.first(), scratch.data() + r * p.count(), static_cast<size_t>(p.count()) * sizeof(float));
      }
    });
  }

 private:
  int64_t out_, in_;
  std::vector<std::unique_ptr<const Panel>> panels_;  // a Panel holds a mutex: not movable
};

}  // namespace

bool packing_available() { return true; }

namespace {

// oneDNN's own exception as the engine's one-line Error, naming the weight.
template <class Fn>
auto or_error(int64_t out, int64_t in, Fn&& fn) {
  try {
    return fn();
  } catch (const dnnl::error& e) {
    throw Error("oneDNN could not pack a (" + std::to_string(out) + ", " + std::to_string(in) + ") weight: " + e.what());
  }
}

}  // namespace

int64_t packed_weight_bytes(int64_t out, int64_t in) {
  check_shape(out, in);
  return or_error(out, in, [&] {
    const int64_t width = panel_width(out), full = out / width, last = out % width;
    int64_t bytes = checked_mul(full, static_cast<int64_t>(packed_desc(width, in).get_size()), "packed weight bytes");
    if (last > 0) bytes = checked_add(bytes, static_cast<int64_t>(packed_desc(last, in).get_size()), "packed weight bytes");
    return bytes;
  });
}

std::shared_ptr<const PackedWeight> pack_weight(const float* w, int64_t out, int64_t in) {
  check_shape(out, in);
  return or_error(out, in, [&]() -> std::shared_ptr<const PackedWeight> { return std::make_shared<const DnnlPackedWeight>(w, out, in); });
}

}  // namespace attnsim
