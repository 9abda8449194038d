// attnsim-cli bench-decode: one decode step over a KV cache (trace kept) against recomputing
// the full causal forward, for a range of lengths, in one run; and each step's time against
// the bytes it must read (weights + cache) at the machine's measured memory bandwidth.
// Medians: the build machines are shared, so single runs are noise.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "engine/cost.h"
#include "engine/decode.h"
#include "engine/error.h"
#include "engine/parallel.h"
#include "engine/random.h"
#include "table.h"

namespace attnsim::cli {

namespace {

struct BenchDecodeOptions {
  int64_t d_model = 512, heads = 8, kv_heads = 2;
  std::string lengths = "128,256,512,1024,2048,4096";
  int repeats = 21, forward_repeats = 3;
  bool json = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Fn>
double time_ms(Fn&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Tensor random_tensor(const Dims& shape, uint64_t seed) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = random_normal(seed, 99, i);
  return t;
}

// Read bandwidth: a 512 MiB buffer read on every core (an XOR of 64-bit words, which the
// compiler vectorises, so the loop waits on memory, not on adds), median of 5, bytes/s.
double measure_read_bandwidth() {
  const int64_t n = int64_t{1} << 26;  // 64-bit words
  std::vector<uint64_t> buf(n);
  for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;
  std::vector<double> secs;
  std::atomic<uint64_t> sink{0};
  for (int pass = 0; pass < 5; ++pass)
    secs.push_back(time_ms([&] {
                     parallel_for(n, n / default_threads() + 1, [&](int64_t first, int64_t last) {
                       uint64_t x = 0;
                       for (int64_t i = first; i < last; ++i) x ^= buf[i];
                       sink.fetch_xor(x);
                     });
                   }) /
                   1e3);
  return static_cast<double>(n) * 8 / median(secs);
}

}  // namespace

Runner add_bench_decode_command(CLI::App& app) {
  auto o = std::make_shared<BenchDecodeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench-decode", "time one decode step over a KV cache vs recomputing the full causal forward (CPU, medians)");
  cmd->add_option("--d-model", o->d_model, "model width")->capture_default_str();
  cmd->add_option("--heads", o->heads, "query heads h")->capture_default_str();
  cmd->add_option("--kv-heads", o->kv_heads, "key/value heads g")->capture_default_str();
  cmd->add_option("--lengths", o->lengths, "cached lengths t, comma-separated")->capture_default_str();
  cmd->add_option("--repeats", o->repeats, "decode steps timed per length")->capture_default_str();
  cmd->add_option("--forward-repeats", o->forward_repeats, "full forwards timed per length")->capture_default_str();
  cmd->add_flag("--json", o->json, "print JSON");
  return [o] {
    if (o->repeats < 1 || o->forward_repeats < 1) throw Error("--repeats and --forward-repeats must be at least 1");
    std::vector<int64_t> lengths;
    std::stringstream in(o->lengths);
    for (std::string item; std::getline(in, item, ',');) {
      size_t used = 0;
      long long v = -1;
      try {
        v = std::stoll(item, &used);
      } catch (...) {
        used = 0;
      }
      if (used == 0 || used != item.size() || v < 2) throw Error("--lengths: '" + item + "' is not a length of 2 or more");
      lengths.push_back(v);
    }
    if (lengths.empty()) throw Error("--lengths lists no lengths");
    MhaConfig c;
    c.d_model = o->d_model;
    c.heads = o->heads;
    c.kv_heads = o->kv_heads;
    c.batch = 1;
    c.tq = c.tk = 1;
    validate(c);
    const int64_t g = c.kv_group_count(), dk = c.head_dim();
    // Every length's full forward must fit before anything is allocated or timed (the
    // bandwidth probe alone reads 512 MiB).
    for (int64_t t : lengths) {
      MhaConfig f = c;
      f.tq = f.tk = t;
      f.mask = parse_mask_spec("causal");
      validate(f);
      const int64_t need = predict_trace_bytes(f), limit = effective_mem_limit(f);
      if (need > limit)
        throw Error("the full forward at t = " + std::to_string(t) + " needs " + human_bytes(need) +
                    " to keep its trace, over the limit of " + human_bytes(limit));
    }
    const MhaWeights w = init_weights(c.d_model, true, 1, c.kv_dim());
    const double bandwidth = measure_read_bandwidth();

    nlohmann::json rows = nlohmann::json::array();
    Table table({"t", "decode step ms", "full forward ms", "speed-up", "bytes read/step", "at bandwidth ms",
                 "step / floor"});
    for (int64_t t : lengths) {
      // decode: a cache holding t-1 positions, then `repeats` steps of one new row each
      KvCache cache(1, g, dk, t - 1 + o->repeats + 1);
      cache.append(random_tensor({1, g, t - 1, dk}, 1), random_tensor({1, g, t - 1, dk}, 2));
      std::vector<double> step_ms;
      for (int r = 0; r <= o->repeats; ++r) {
        const Tensor x = random_tensor({1, 1, c.d_model}, 3 + r);
        Trace kept;
        const double ms = time_ms([&] { kept = attend_cached(c, w, cache, x); });  // every step kept
        if (r > 0) step_ms.push_back(ms);  // the first is a warm-up
      }
      // the alternative: the whole causal forward over t tokens, every step kept
      MhaConfig f = c;
      f.tq = f.tk = t;
      f.mask = parse_mask_spec("causal");
      const MhaInputs inputs = random_inputs(f);
      std::vector<double> fwd_ms;
      for (int r = 0; r < o->forward_repeats; ++r)
        fwd_ms.push_back(time_ms([&] { (void)forward(f, w, inputs); }));
      const double step = median(step_ms), full = median(fwd_ms);
      const int64_t bytes = decode_step_read_bytes(c, 1, t);
      const double floor_ms = static_cast<double>(bytes) / bandwidth * 1e3;
      rows.push_back({{"t", t}, {"decode_step_ms", step}, {"full_forward_ms", full}, {"speedup", full / step},
                      {"bytes_read", bytes}, {"bandwidth_floor_ms", floor_ms}, {"step_over_floor", step / floor_ms}});
      char buf[7][48];
      std::snprintf(buf[0], 48, "%.3f", step);
      std::snprintf(buf[1], 48, "%.1f", full);
      std::snprintf(buf[2], 48, "%.0f×", full / step);
      std::snprintf(buf[3], 48, "%s", human_bytes(bytes).c_str());
      std::snprintf(buf[4], 48, "%.3f", floor_ms);
      std::snprintf(buf[5], 48, "%.1f×", step / floor_ms);
      table.add({std::to_string(t), buf[0], buf[1], buf[2], buf[3], buf[4], buf[5]});
      if (!o->json) std::fprintf(stderr, "t=%lld done\n", (long long)t);
    }
    if (o->json) {
      nlohmann::json j = {{"d_model", c.d_model}, {"heads", c.heads}, {"kv_heads", g}, {"batch", 1},
                          {"read_bandwidth_bytes_per_s", bandwidth}, {"repeats", o->repeats},
                          {"forward_repeats", o->forward_repeats}, {"rows", rows}};
      std::printf("%s\n", j.dump(2).c_str());
      return 0;
    }
    std::printf("decode step (one new row, trace kept) vs full causal forward (trace kept): d=%lld h=%lld g=%lld B=1, CPU\n",
                (long long)c.d_model, (long long)c.heads, (long long)g);
    std::printf("medians of %d steps and %d forwards per length; the machine may be shared: expect noise\n",
                o->repeats, o->forward_repeats);
    std::printf("measured read bandwidth: %.2f GB/s (512 MiB read on %d threads, median of 5)\n\n", bandwidth / 1e9,
                default_threads());
    table.print();
    std::printf("\nbytes read per step = weights (W_Q, W_O: d², W_K, W_V: g·d_k·d, with biases) + the cache's K and V (2·g·t·d_k), float32\n");
    return 0;
  };
}

}  // namespace attnsim::cli
