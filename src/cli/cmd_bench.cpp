// attnsim-cli bench: time the full forward pass with every intermediate kept.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "commands.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "options.h"

namespace attnsim::cli {

namespace {

struct BenchOptions {
  ModelOptions model;
  int repeats = 20;
  bool json = false;
};

// Multiply-adds ×2 of the four projections and the two batched products.
double forward_flops(const MhaConfig& c) {
  const double B = c.batch, Tq = c.tq, Tk = c.tk, d = c.d_model;
  const double projections = 2 * B * Tq * d * d + 2 * 2 * B * Tk * d * d + (c.wo_identity ? 0 : 2 * B * Tq * d * d);
  const double attention = 2 * 2 * B * Tq * Tk * d;  // q·kᵀ and alpha·v over all heads
  return projections + attention;
}

}  // namespace

Runner add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand("bench", "time the forward pass (default: the article's B=32 T=128 d=512 h=8)");
  add_model_options(*cmd, o->model);
  cmd->add_option("--repeats", o->repeats, "timed runs after one warm-up")->capture_default_str();
  cmd->add_flag("--json", o->json, "print JSON");
  return [o] {
    if (o->repeats < 1) throw Error("--repeats must be at least 1");
    const Model m = build_model(o->model);
    Backend& backend = backend_by_name(o->model.backend);
    int64_t held = forward(m.config, m.weights, m.inputs, backend).trace.held_bytes();  // warm-up
    std::vector<double> ms;
    for (int i = 0; i < o->repeats; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const ForwardResult r = forward(m.config, m.weights, m.inputs, backend);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      held = r.trace.held_bytes();
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    const double gflops = forward_flops(m.config) / (median * 1e-3) / 1e9;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const int64_t peak_rss = static_cast<int64_t>(usage.ru_maxrss) * 1024;
    if (o->json) {
      std::printf("{\"median_ms\": %.3f, \"min_ms\": %.3f, \"max_ms\": %.3f, \"gflops\": %.2f, "
                  "\"trace_bytes\": %lld, \"peak_rss_bytes\": %lld, \"repeats\": %d, \"backend\": \"%s\"}\n",
                  median, ms.front(), ms.back(), gflops, (long long)held, (long long)peak_rss, o->repeats,
                  backend.name().c_str());
      return 0;
    }
    const MhaConfig& c = m.config;
    std::printf("forward B=%lld Tq=%lld Tk=%lld d=%lld h=%lld, every step kept, backend %s, %d runs\n",
                (long long)c.batch, (long long)c.tq, (long long)c.tk, (long long)c.d_model,
                (long long)c.heads, backend.name().c_str(), o->repeats);
    std::printf("median %.2f ms  (min %.2f, max %.2f)  %.1f GFLOP/s\n", median, ms.front(), ms.back(), gflops);
    std::printf("held by the trace: %s   peak RSS: %s\n", format_bytes(held).c_str(), human_bytes(peak_rss).c_str());
    return 0;
  };
}

}  // namespace attnsim::cli
