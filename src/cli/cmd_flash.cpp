// attnsim-cli flash: the forward pass with the tiled FlashAttention core (online softmax),
// its tile counts, memory and slow-memory traffic beside the standard path's, optionally
// checked against the standard path (--compare) and timed against it (--bench N), at the
// model's own size or at a sweep of lengths (--bench N --sweep-tq 256,1024,4096: the engine's
// FlashBench, the measurement the app's flash panel runs), the IO model's bytes beside.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <sstream>

#include "commands.h"
#include "engine/atomic_file.h"
#include "engine/blas_kernels.h"
#include "engine/checked.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/flash.h"
#include "engine/flash_bench.h"
#include "engine/flash_json.h"
#include "engine/gemm_floor.h"
#include "engine/npy.h"
#include "engine/trace_json.h"
#include "options.h"

namespace attnsim::cli {

namespace {

struct FlashCliOptions {
  ModelOptions model;
  int64_t block_q = 0, block_k = 0;
  int threads = 0;
  std::string dump;
  bool force = false;
  std::string tiles_head;  // "B:H" -> record only that head's tile events
  bool compare = false;
  bool json = false;
  int bench = 0;
  std::string sweep_tq;  // "256,1024,4096": --bench at each T instead of the model's own size
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void parse_tiles_head(const std::string& text, FlashOptions& o) {
  const size_t colon = text.find(':');
  try {
    size_t used1 = 0, used2 = 0;
    const std::string a = text.substr(0, colon), b = colon == std::string::npos ? "" : text.substr(colon + 1);
    o.trace_batch = std::stoll(a, &used1);
    o.trace_head = std::stoll(b, &used2);
    if (used1 != a.size() || used2 != b.size() || o.trace_batch < 0 || o.trace_head < 0) throw 0;
  } catch (...) {
    throw Error("--tiles-head '" + text + "' is not B:H (a batch element and a head, e.g. 0:3)");
  }
}

nlohmann::json io_json(const FlashIo& io) {
  return {{"reads", io.reads}, {"writes", io.writes}, {"bytes", 4 * (io.reads + io.writes)}};
}

nlohmann::json figures_json(const FlashCompareFigures& f) {
  return {{"max_abs_diff", f.max_abs_diff}, {"tolerance", f.tolerance}, {"std_error_vs_f64", f.std_error},
          {"flash_error_vs_f64", f.flash_error}, {"floor", f.floor}, {"nan_both", f.nan_count},
          {"nan_mismatches", f.nan_mismatches}, {"ok", f.ok()}};
}

// "256,1024,4096" -> lengths; one line naming the bad item otherwise.
std::vector<int64_t> parse_lengths(const std::string& text) {
  std::vector<int64_t> out;
  size_t at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (...) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v < 1 || item[0] == '+')
      throw Error("--sweep-tq '" + text + "': '" + item + "' is not a whole number from 1 to 2^63-1 (lengths, e.g. 256,1024,4096)");
    out.push_back(v);
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

// The options a sweep does not take: it builds its own inputs at each length, without a
// mask (the IO model's counts), on the CPU.
void check_sweep_options(const FlashCliOptions& o, const CLI::App& cmd) {
  const ModelOptions& m = o.model;
  for (const char* name : {"--tq", "--tk", "--block-q", "--block-k", "--dump", "--compare", "--tiles-head", "--input",
                           "--query", "--key", "--value", "--weights", "--mask", "--mask-file", "--mask-bug", "--bug",
                           "--dropout", "--train", "--wo-identity", "--kv-heads", "--kv-repeat-copy", "--backend"}) {
    const std::string n = name;
    if (cmd.count(name) == 0 || (n == "--mask" && m.mask == "none") || (n == "--backend" && m.backend == "cpu")) continue;
    throw Error("--sweep-tq runs its own inputs at each length, without a mask, on the CPU: drop " + n);
  }
  if (o.bench < 1) throw Error("--sweep-tq needs --bench N (N runs of each path at each length)");
}

nlohmann::json sweep_row_json(const FlashBenchRow& r) {
  nlohmann::json j = {{"t", r.t}, {"block_q", r.shape.block_q}, {"block_k", r.shape.block_k},
                      {"standard_seconds", r.standard_seconds}, {"tiled_seconds", r.tiled_seconds},
                      {"standard_median_s", r.standard_median()}, {"tiled_median_s", r.tiled_median()},
                      {"ratio_standard_over_tiled", r.standard_median() / r.tiled_median()},
                      {"io_standard", io_json(r.io_standard)}, {"io_tiled", io_json(r.io_tiled)},
                      {"io_ratio", double(r.standard_io_bytes()) / double(r.tiled_io_bytes())},
                      {"standard_score_steps_bytes", r.score_bytes}, {"tiled_core_bytes", r.tiled_core_bytes},
                      {"predicted_bytes", r.needed_bytes}};
  return j;
}

// --bench N --sweep-tq LIST: the engine's FlashBench, every row, then one table or JSON.
int run_sweep(const FlashCliOptions& o, const CLI::App& cmd) {
  check_sweep_options(o, cmd);
  FlashBenchSpec spec;
  spec.batch = o.model.batch;
  spec.heads = o.model.heads;
  spec.d_model = o.model.d_model;
  spec.bias = !o.model.no_bias;
  spec.seed = o.model.seed;
  spec.lengths = parse_lengths(o.sweep_tq);
  spec.runs = o.bench;
  spec.threads = o.threads;
  if (!o.model.mem_limit.empty()) spec.mem_limit = parse_size(o.model.mem_limit);
  FlashBench bench(spec);
  // Every length is predicted before any runs: one that cannot is the whole command's error.
  if (const std::string no = bench.first_refusal(); !no.empty()) throw Error(no);
  while (bench.step()) {
  }
  if (const std::string no = bench.first_refusal(); !no.empty()) throw Error(no);  // a pass that failed
  const int64_t l2 = flash_l2_bytes();
  const std::string kernels = blas_kernels().core;
  if (o.json) {
    nlohmann::json j;
    j["sweep"] = {{"batch", spec.batch}, {"heads", spec.heads}, {"d_model", spec.d_model},
                  {"head_dim", spec.d_model / spec.heads}, {"mask", "none"}, {"runs", spec.runs},
                  {"l2_bytes", l2}, {"l2_known", l2 > 0}, {"blas_kernels", kernels}};
    j["sweep"]["rows"] = nlohmann::json::array();
    for (const FlashBenchRow& r : bench.rows()) j["sweep"]["rows"].push_back(sweep_row_json(r));
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("flash vs standard on this CPU: B=%lld h=%lld d_model=%lld d_k=%lld, no mask; medians of %d runs each, "
              "the two paths interleaved\n",
              (long long)spec.batch, (long long)spec.heads, (long long)spec.d_model,
              (long long)(spec.d_model / spec.heads), spec.runs);
  std::printf("fast memory: %s, tiles sized for a quarter of it; BLAS kernels %s. Slow memory is RAM, not HBM.\n",
              l2 > 0 ? ("this core's L2, " + human_bytes(l2) + " (sysconf)").c_str() : "L2 unknown, 1 MiB assumed",
              kernels.c_str());
  std::printf("%7s %9s %12s %10s %9s %14s %14s %9s %14s\n", "T", "Br x Bc", "standard ms", "tiled ms", "std/tiled",
              "IO std bytes", "IO tiled bytes", "IO ratio", "S,P held");
  for (const FlashBenchRow& r : bench.rows()) {
    const std::string blocks = std::to_string(r.shape.block_q) + " x " + std::to_string(r.shape.block_k);
    std::printf("%7lld %9s %12.3f %10.3f %9.2f %14s %14s %9.2f %14s\n", (long long)r.t, blocks.c_str(),
                1e3 * r.standard_median(), 1e3 * r.tiled_median(), r.standard_median() / r.tiled_median(),
                human_bytes(r.standard_io_bytes()).c_str(), human_bytes(r.tiled_io_bytes()).c_str(),
                double(r.standard_io_bytes()) / double(r.tiled_io_bytes()), human_bytes(r.score_bytes).c_str());
  }
  std::printf("IO bytes: the IO model's slow-memory reads + writes (flash.h); S,P held: what the standard trace "
              "allocated in its score-sized steps.\n");
  return 0;
}

const char* const kFlashNotes =
    "The tiled path (FlashAttention-2 order: query blocks of Br rows outside, key/value blocks of\n"
    "Bc rows inside) keeps a running max m and sum l per row and never holds the (Tq,Tk) scores.\n"
    "A tile whose every score is hidden is skipped (nothing read). Where it differs from `trace`\n"
    "by design: rounding (it divides by l once at the end; --compare checks the FlashAttention\n"
    "rule max|flash - std| <= 2 x max|std32 - f64| + floor, floor = FLT_EPSILON/2 x max|f64|);\n"
    "teaching bugs and train-mode dropout are refused (correct math only); the score-sized steps\n"
    "are listed as skipped. Fully hidden rows are NaN in both paths, at the same places.\n"
    "Slow-memory traffic follows the paper's IO model (elements; the standard path writes S and P\n"
    "out and reads them back). Example: flash --batch 1 --tq 4096 --d-model 512 --heads 8 --bench 5\n"
    "A sweep over lengths (own inputs, no mask): flash --batch 1 --d-model 512 --heads 8 --bench 5 --sweep-tq 256,1024,4096";

}  // namespace

Runner add_flash_command(CLI::App& app) {
  auto opts = std::make_shared<FlashCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "flash", "forward pass with the tiled FlashAttention core: tiles, memory, slow-memory traffic");
  add_model_options(*cmd, opts->model);
  cmd->footer(std::string(kMaskSpecHelp) + "\n\n" + kFlashNotes);
  const CLI::Validator size = whole_number(1, std::numeric_limits<int64_t>::max());
  cmd->add_option("--block-q", opts->block_q, "Br: query rows per block (default: sized for this CPU's L2)")->check(size);
  cmd->add_option("--block-k", opts->block_k, "Bc: key/value rows per block (default: sized for L2)")->check(size);
  cmd->add_option("--threads", opts->threads, "worker threads over (b, h, query block); default: all cores")
      ->check(whole_number(1, 4096));
  cmd->add_option("--dump", opts->dump, "write DIR/out.npy, DIR/tiles.json (every tile event) and DIR/trace.json (DIR new or empty)")->check(not_empty());
  cmd->add_flag("--force", opts->force, "with --dump: replace a folder that is not empty");
  cmd->add_option("--tiles-head", opts->tiles_head, "with --dump: record the tile events of one head only, B:H");
  cmd->add_flag("--compare", opts->compare,
                "also run the standard path: max abs difference and the tolerance 2·|std32 − f64| + floor (exit 1 if over)");
  cmd->add_option("--bench", opts->bench, "time N runs of the tiled and of the standard path, interleaved; print medians")
      ->check(whole_number(0, 1000000));
  cmd->add_option("--sweep-tq", opts->sweep_tq,
                  "with --bench N: time both paths at each length T (Tq = Tk, comma list, e.g. 256,1024,4096), no mask; "
                  "prints the IO model's bytes beside the times");
  cmd->add_flag("--json", opts->json, "print the summary as JSON");
  return [opts, cmd] {
    if (!opts->sweep_tq.empty()) return run_sweep(*opts, *cmd);
    FlashOptions fo;
    fo.block_q = opts->block_q;
    fo.block_k = opts->block_k;
    fo.threads = opts->threads;
    if (!opts->tiles_head.empty() && opts->dump.empty()) throw Error("--tiles-head only applies with --dump");
    if (!opts->dump.empty()) {
      fo.record_tiles = true;
      if (!opts->tiles_head.empty()) parse_tiles_head(opts->tiles_head, fo);
    }
    // The tiled pass, plus the standard trace while --compare or --bench runs it beside.
    const bool standard_too = opts->compare || opts->bench > 0;
    const Model m = build_model(
        opts->model,
        [&](const MhaConfig& c) {
          return (Size(predict_flash_bytes(c, fo)) + (standard_too ? predict_trace_bytes(c) : 0)).value();
        },
        fo.record_tiles && fo.trace_head < 0
            ? "; with --dump the tile trace holds most of it: record one head (--tiles-head B:H) or use a shorter sequence"
            : "");
    Backend& backend = backend_by_name(opts->model.backend);  // Error when CUDA is missing
    fo.mem_limit = m.config.mem_limit;

    const auto t0 = std::chrono::steady_clock::now();
    const FlashResult r = flash_forward(m.config, m.weights, m.inputs, fo, backend);
    const double flash_seconds = seconds_since(t0);
    const FlashStats& st = r.core.stats;
    const FlashShape& s = st.shape;
    const double scale = m.config.bug == Bug::NoScale ? 1.0 : 1.0 / std::sqrt(double(s.head_dim));

    FlashComparison cmp;
    if (opts->compare) cmp = compare_flash_with_standard(m.config, m.weights, m.inputs, r, backend);

    std::vector<double> t_flash, t_std;
    int64_t std_score_bytes = 0;
    if (opts->bench > 0) {
      FlashOptions quiet = fo;
      quiet.record_tiles = false;
      for (int i = 0; i < opts->bench; ++i) {
        auto a = std::chrono::steady_clock::now();
        { const FlashResult x = flash_forward(m.config, m.weights, m.inputs, quiet, backend); }
        t_flash.push_back(seconds_since(a));
        a = std::chrono::steady_clock::now();
        {
          const ForwardResult y = forward(m.config, m.weights, m.inputs, backend);
          if (i == 0) std_score_bytes = score_step_bytes(y.trace);  // after the clock: the trace's own count
        }
        t_std.push_back(seconds_since(a));
      }
    }

    if (!opts->dump.empty())
      write_folder_atomically(opts->dump, [&](const std::string& dir) {
        write_npy(dir + "/out.npy", r.trace.at("out").out);
        AtomicFile tiles(dir + "/tiles.json");
        write_flash_tiles_json(tiles.stream(), r.core, scale);
        tiles.commit();
        write_file_atomically(dir + "/trace.json", trace_to_json(m.config, r.trace).dump(2) + "\n");
      }, opts->force);

    // The FLOP floor: S = QKᵀ and P·V over the tiles visited (2·Br·Bc·dk multiply-adds per
    // tile and head; 4·Tq·Tk·d in all without a mask) plus the projections, at the sgemm
    // rate measured now: no pass can do these products faster with this BLAS.
    const MhaConfig& fc = m.config;
    const double visited = st.tiles_total ? double(st.tiles_visited) / double(st.tiles_total) : 1.0;
    const double core_flops = 4.0 * fc.batch * fc.tq * fc.tk * fc.d_model * visited;
    const double projection_flops = forward_gemm_flops(fc) - 4.0 * fc.batch * fc.tq * fc.tk * fc.d_model;
    const double sgemm_gflops = measure_sgemm_gflops();
    const double floor_seconds = (core_flops + projection_flops) / (sgemm_gflops * 1e9);
    const int64_t out_nan = r.trace.at("out").nan_count;
    if (opts->json) {
      nlohmann::json j;
      j["config"] = config_to_json(m.config);
      j["block_q"] = s.block_q;
      j["block_k"] = s.block_k;
      j["q_blocks"] = s.q_blocks();
      j["k_blocks"] = s.k_blocks();
      j["threads"] = st.threads;
      j["tiles"] = {{"total", st.tiles_total}, {"visited", st.tiles_visited}, {"skipped", st.tiles_skipped}};
      j["io_tiled"] = io_json(st.io);
      j["io_tiled_closed_form"] = io_json(flash_io_tiled(s, FlashMask::from_spec(m.config.mask, m.inputs.mask_file)));
      j["io_standard"] = io_json(st.io_standard);
      j["bytes"] = {{"fast_per_worker", st.fast_bytes},
                    {"tiled_core", st.core_bytes},
                    {"standard_core_S_P", st.standard_core_bytes},
                    {"tiled_trace_held", r.trace.held_bytes()},
                    {"tiled_predicted", r.predicted_bytes},
                    {"standard_trace_predicted", r.standard_trace_bytes}};
      j["seconds"] = flash_seconds;
      j["flop_floor"] = {{"core_gflop", core_flops / 1e9}, {"projections_gflop", projection_flops / 1e9},
                         {"sgemm_gflops", sgemm_gflops}, {"seconds", floor_seconds},
                         {"time_over_floor", flash_seconds / floor_seconds}};
      j["out_nan_count"] = out_nan;
      if (opts->compare) {
        j["compare"] = {{"ctx_heads", figures_json(cmp.ctx_heads)}, {"out", figures_json(cmp.out)},
                        {"standard_trace_held", cmp.standard_bytes}};
      }
      if (opts->bench > 0)
        j["bench"] = {{"runs", opts->bench}, {"tiled_median_s", median_of(t_flash)},
                      {"standard_median_s", median_of(t_std)}, {"ratio_tiled_over_standard", median_of(t_flash) / median_of(t_std)},
                      {"io_tiled_bytes", 4 * (st.io.reads + st.io.writes)},
                      {"io_standard_bytes", 4 * (st.io_standard.reads + st.io_standard.writes)},
                      {"standard_score_steps_bytes", std_score_bytes}};
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      const MhaConfig& c = m.config;
      std::printf("flash attention (tiled, online softmax): B=%lld Tq=%lld Tk=%lld d_model=%lld h=%lld d_k=%lld  mask=%s%s\n",
                  (long long)c.batch, (long long)c.tq, (long long)c.tk, (long long)c.d_model, (long long)c.heads,
                  (long long)c.head_dim(), format_mask_spec(c.mask).c_str(), m.inputs.mask_file.defined() ? " + mask file" : "");
      std::printf("blocks         Br=%lld Bc=%lld -> %lld x %lld tiles per head; %s visited, %s skipped (wholly hidden), %d threads\n",
                  (long long)s.block_q, (long long)s.block_k, (long long)s.q_blocks(), (long long)s.k_blocks(),
                  format_count(st.tiles_visited).c_str(), format_count(st.tiles_skipped).c_str(), st.threads);
      std::printf("fast memory    %s per worker (Q_i, K_j, V_j, S/P tile, O_i, m, l)\n", human_bytes(st.fast_bytes).c_str());
      std::printf("held           tiled core %s (out, m, l, workers) vs standard S+P %s; whole tiled trace %s vs `trace` %s\n",
                  human_bytes(st.core_bytes).c_str(), human_bytes(st.standard_core_bytes).c_str(),
                  human_bytes(r.trace.held_bytes()).c_str(), human_bytes(r.standard_trace_bytes).c_str());
      std::printf("slow memory    tiled   reads %s, writes %s elements (%s)\n", format_count(st.io.reads).c_str(),
                  format_count(st.io.writes).c_str(), human_bytes(4 * (st.io.reads + st.io.writes)).c_str());
      std::printf("               standard reads %s, writes %s elements (%s), %.1fx the tiled traffic\n",
                  format_count(st.io_standard.reads).c_str(), format_count(st.io_standard.writes).c_str(),
                  human_bytes(4 * (st.io_standard.reads + st.io_standard.writes)).c_str(),
                  double(st.io_standard.reads + st.io_standard.writes) / double(st.io.reads + st.io.writes));
      std::printf("time           %.3f s (whole pass)%s\n", flash_seconds,
                  out_nan ? ("; out has " + format_count(out_nan) + " NaN (fully hidden rows, as in the standard path)").c_str() : "");
      std::printf("FLOP floor     %.1f GFLOP (S = QKᵀ and P·V, 4·Tq·Tk·d over the visited tiles) + %.1f GFLOP "
                  "(projections) at sgemm %.1f GFLOP/s (%s kernels, measured now) = %.3f s; this pass took %.2fx that\n",
                  core_flops / 1e9, projection_flops / 1e9, sgemm_gflops, blas_kernels().core.c_str(), floor_seconds,
                  flash_seconds / floor_seconds);
      if (opts->compare) {
        for (auto [name, f] : {std::pair{"ctx_heads", &cmp.ctx_heads}, std::pair{"out", &cmp.out}})
          std::printf("compare %-9s max|flash − std| = %.3g  tolerance %.3g (2 × |std32 − f64| = 2 × %.3g, + floor %.3g); "
                      "|flash − f64| = %.3g; NaN both %lld, mismatched %lld  -> %s\n",
                      name, f->max_abs_diff, f->tolerance, f->std_error, f->floor, f->flash_error,
                      (long long)f->nan_count, (long long)f->nan_mismatches, f->ok() ? "OK" : "FAIL");
      }
      if (opts->bench > 0)
        std::printf("bench          %d runs: tiled median %.3f s, standard median %.3f s, ratio %.2f; IO model %s vs %s, "
                    "the standard trace's score-sized steps held %s\n", opts->bench,
                    median_of(t_flash), median_of(t_std), median_of(t_flash) / median_of(t_std),
                    human_bytes(4 * (st.io.reads + st.io.writes)).c_str(),
                    human_bytes(4 * (st.io_standard.reads + st.io_standard.writes)).c_str(),
                    human_bytes(std_score_bytes).c_str());
      if (!opts->dump.empty()) std::printf("dumped         %s/out.npy, tiles.json (%s events), trace.json\n",
                                           opts->dump.c_str(), format_count(r.core.events.size()).c_str());
    }
    return opts->compare && !(cmp.ctx_heads.ok() && cmp.out.ok()) ? 1 : 0;
  };
}

}  // namespace attnsim::cli
