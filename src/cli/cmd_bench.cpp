// attnsim-cli bench: time the full forward pass with every intermediate kept; with --floor,
// also the pass's own matrix products alone (same shapes, same library, same run).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "commands.h"
#include "engine/blas_kernels.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/gemm_floor.h"
#include "options.h"

namespace attnsim::cli {

namespace {

struct BenchOptions {
  ModelOptions model;
  int repeats = 20;
  bool json = false;
  bool floor = false;
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Fn>
double time_ms(Fn&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Runner add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand("bench", "time the forward pass (default: the article's B=32 T=128 d=512 h=8)");
  add_model_options(*cmd, o->model);
  cmd->add_option("--repeats", o->repeats, "timed runs after one warm-up")->capture_default_str()->check(whole_number(1, 1000000));
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->add_flag("--floor", o->floor, "also time the pass's matrix products alone, run by run, and print the ratio");
  return [o] {
    if (o->repeats < 1) throw Error("--repeats must be at least 1");
    const Model m = build_model(o->model, predict_trace_bytes);
    Backend& backend = backend_by_name(o->model.backend);
    const BlasKernels& blas = blas_kernels();
    if (!blas.warning.empty()) std::fprintf(stderr, "attnsim-cli: warning: %s\n", blas.warning.c_str());
    const double sgemm_gflops = measure_sgemm_gflops();
    ForwardResult last = forward(m.config, m.weights, m.inputs, backend);  // warm-up
    if (o->floor) run_forward_gemms(m.config, m.weights, last, backend);
    // Pass and floor alternate, so both see the same share of a noisy machine.
    std::vector<double> pass_ms, floor_ms;
    for (int i = 0; i < o->repeats; ++i) {
      pass_ms.push_back(time_ms([&] { last = forward(m.config, m.weights, m.inputs, backend); }));
      if (o->floor) floor_ms.push_back(time_ms([&] { run_forward_gemms(m.config, m.weights, last, backend); }));
    }
    const int64_t held = last.trace.held_bytes();
    const double median = median_of(pass_ms);
    const double flops = forward_gemm_flops(m.config);
    const double gflops = flops / (median * 1e-3) / 1e9;
    const double floor_median = o->floor ? median_of(floor_ms) : 0;
    const double of_floor = o->floor ? floor_median / median : 0;  // 1 = the pass costs no more than its GEMMs
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const int64_t peak_rss = static_cast<int64_t>(usage.ru_maxrss) * 1024;
    const auto [lo, hi] = std::minmax_element(pass_ms.begin(), pass_ms.end());
    if (o->json) {
      std::printf("{\"median_ms\": %.3f, \"min_ms\": %.3f, \"max_ms\": %.3f, \"gflops\": %.2f, "
                  "\"trace_bytes\": %lld, \"peak_rss_bytes\": %lld, \"repeats\": %d, \"backend\": \"%s\", "
                  "\"blas\": \"%s\", \"kernels\": \"%s\", \"sgemm_gflops\": %.1f",
                  median, *lo, *hi, gflops, (long long)held, (long long)peak_rss, o->repeats,
                  backend.name().c_str(), blas.library.c_str(), blas.core.c_str(), sgemm_gflops);
      if (o->floor) std::printf(", \"floor_ms\": %.3f, \"of_floor\": %.3f", floor_median, of_floor);
      std::printf("}\n");
      return 0;
    }
    const MhaConfig& c = m.config;
    std::printf("forward B=%lld Tq=%lld Tk=%lld d=%lld h=%lld, every step kept, backend %s, %d runs\n",
                (long long)c.batch, (long long)c.tq, (long long)c.tk, (long long)c.d_model,
                (long long)c.heads, backend.name().c_str(), o->repeats);
    std::printf("BLAS: %s; sgemm 2048x512x512 at %.1f GFLOP/s\n", blas.summary().c_str(), sgemm_gflops);
    std::printf("median %.2f ms  (min %.2f, max %.2f)  %.1f GFLOP/s\n", median, *lo, *hi, gflops);
    if (o->floor)
      std::printf("GEMM floor (the pass's %s matrix products alone): median %.2f ms; the pass runs at %.0f%% of it\n",
                  c.wo_identity ? "3 projections and 2 batched" : "4 projections and 2 batched", floor_median,
                  100 * of_floor);
    std::printf("held by the trace: %s   peak RSS: %s\n", format_bytes(held).c_str(), human_bytes(peak_rss).c_str());
    return 0;
  };
}

}  // namespace attnsim::cli
