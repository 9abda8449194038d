// attnsim-cli bench-model: time a Hugging Face model's whole forward pass (every layer through
// the engine, one layer's every intermediate kept), after loading it once; with --whole, side
// by side with the whole pass keeping every step of every block (model/whole_pass.h); with
// --decode N, N greedy tokens through the KV caches after it (model/hf_bench.h, which the page
// times too); with --floor, the GEMM floor of each (its matrix products alone) and the share of
// the pass's time it is.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "commands.h"
#include "engine/blas_kernels.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "hf_input.h"
#include "model/experiments/hf_bench.h"
#include "model/pass/hf_forward.h"
#include "model/pass/whole_models.h"
#include "options.h"

namespace attnsim::cli {

Runner add_bench_model_command(CLI::App& app) {
  struct Args {
    std::string dir, mem_limit;
    HfInput in;
    int64_t length = 64, layer = 0;
    int repeats = 10;
    int64_t decode = 0;
    bool json = false, whole = false, floor = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("bench-model", "time a Hugging Face model's forward pass (median of --repeats)");
  cmd->add_option("--model", a->dir, "a Hugging Face folder")->required()->check(not_empty());
  add_hf_input_options(*cmd, a->in, "the input (default: --length random ids)");
  cmd->add_option("--length", a->length, "random token ids when no --tokens / --text")->capture_default_str()
      ->check(whole_number(1, 1 << 20));
  cmd->add_option("--layer", a->layer, "the layer whose every intermediate is kept")->capture_default_str()
      ->check(whole_number(0, 1 << 20));
  cmd->add_option("--repeats", a->repeats, "timed runs after one warm-up")->capture_default_str()->check(whole_number(1, 100000));
  cmd->add_option("--mem-limit", a->mem_limit, "refuse models that need more (e.g. 2G)")->check(mem_limit_size());
  cmd->add_option("--decode", a->decode, "then time N greedy tokens after the input through the KV caches")
      ->check(whole_number(0, 1 << 20));
  cmd->add_flag("--json", a->json, "print JSON");
  cmd->add_flag("--floor", a->floor, "also time the pass's matrix products alone (the GEMM floor), in alternating runs");
  cmd->add_flag("--whole", a->whole, "also time the whole-pass trace (every step of every block kept), in alternating runs");
  return [a] {
    using clock = std::chrono::steady_clock;
    const model::hf::HfConfig c = model::hf::read_hf_config(a->dir);
    if (a->layer >= c.layers) throw Error("--layer " + std::to_string(a->layer) + " is outside the model (layers 0.." + std::to_string(c.layers - 1) + ")");
    std::vector<int32_t> tokens;
    if (!a->in.tokens.empty() || !a->in.text.empty()) tokens = hf_input_tokens(a->in, a->dir, c);
    else tokens = model::hf::bench_token_ids(c, a->length);
    model::hf::check_tokens(c, tokens);
    const auto t0 = clock::now();
    const int64_t T = static_cast<int64_t>(tokens.size());
    int64_t pass = a->whole ? model::predict_whole_bytes({c.layers, c.d_model, c.d_ff, c.vocab}, model::hf::hf_attention_config(c, T))
                            : model::hf::predict_hf_forward_bytes(c, T, false);
    if (a->decode > 0) pass = std::max(pass, model::hf::predict_decode_bytes(c, T, a->decode));
    const model::hf::HfModel m = model::hf::load_hf_checked(a->dir, pass,
                                                 a->mem_limit.empty() ? 0 : parse_size(a->mem_limit), "benchmarking this model");
    const double load_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    model::hf::HfForwardOptions o;
    o.keep_layer = a->layer;
    int64_t held = model::hf::hf_forward(m, tokens, o).traces[static_cast<size_t>(a->layer)].held_bytes();  // warm-up
    const model::PassModel pm = model::pass_model(m);
    if (a->whole) (void)model::whole_forward(pm, tokens);  // warm-up
    std::optional<model::hf::HfGemmFloor> floor;
    if (a->floor) floor.emplace(m, T, T).run();  // and a warm-up
    std::vector<double> ms, whole_ms, floor_ms;
    int64_t whole_held = 0;
    for (int i = 0; i < a->repeats; ++i) {  // alternating, so both see the same machine
      const auto s = clock::now();
      const model::hf::HfForward r = model::hf::hf_forward(m, tokens, o);
      ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - s).count());
      held = r.traces[static_cast<size_t>(a->layer)].held_bytes();
      if (a->floor) {
        const auto f0 = clock::now();
        floor->run();
        floor_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - f0).count());
      }
      if (!a->whole) continue;
      const auto w0 = clock::now();
      const model::WholeTrace w = model::whole_forward(pm, tokens);
      whole_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - w0).count());
      whole_held = w.model.held_bytes();
      for (const Trace& t : w.blocks) whole_held += t.held_bytes();
    }
    std::sort(ms.begin(), ms.end());
    std::sort(whole_ms.begin(), whole_ms.end());
    std::sort(floor_ms.begin(), floor_ms.end());
    const double median = ms[ms.size() / 2], whole_median = a->whole ? whole_ms[whole_ms.size() / 2] : 0.0;
    const double floor_median = a->floor ? floor_ms[floor_ms.size() / 2] : 0.0;
    const std::vector<double> step_ms = a->decode > 1 ? model::hf::time_decode(m, tokens, a->decode) : std::vector<double>{};
    const double decode_rate = step_ms.empty() ? 0.0 : 1000.0 / step_ms[step_ms.size() / 2];
    double decode_floor_rate = 0;  // one step's products against the cache at its middle length
    if (a->floor && !step_ms.empty()) {
      const model::hf::HfGemmFloor step(m, 1, T + a->decode / 2);
      std::vector<double> f;
      for (size_t i = 0; i <= std::min<size_t>(step_ms.size(), 20); ++i) {
        const auto f0 = clock::now();
        step.run();
        f.push_back(std::chrono::duration<double, std::milli>(clock::now() - f0).count());
      }
      std::sort(f.begin() + 1, f.end());  // f[0]: the warm-up
      decode_floor_rate = 1000.0 / f[1 + (f.size() - 1) / 2];
    }
    const int64_t packed_predicted = model::hf::predict_hf_model_memory(a->dir).packed;
    const bool packed = m.packed_bytes > 0;
    const BlasKernels& blas = blas_kernels();
    if (a->json) {
      std::printf("{\"median_ms\": %.3f, \"min_ms\": %.3f, \"max_ms\": %.3f, \"load_ms\": %.1f, \"tokens\": %zu, "
                  "\"layer_trace_bytes\": %lld, \"repeats\": %d, \"kernels\": \"%s\"",
                  median, ms.front(), ms.back(), load_ms, tokens.size(), static_cast<long long>(held), a->repeats,
                  blas.core.c_str());
      if (a->whole)
        std::printf(", \"whole_median_ms\": %.3f, \"whole_trace_bytes\": %lld, \"whole_ratio\": %.3f", whole_median,
                    static_cast<long long>(whole_held), whole_median / median);
      if (!step_ms.empty()) std::printf(", \"decode_tokens_per_s\": %.2f", decode_rate);
      if (a->floor)
        std::printf(", \"floor_ms\": %.3f, \"floor_gflops\": %.3f, \"of_floor\": %.3f", floor_median, floor->flops() / 1e9,
                    floor_median / median);
      if (a->floor && !step_ms.empty()) std::printf(", \"decode_floor_tokens_per_s\": %.2f", decode_floor_rate);
      std::printf(", \"packed_bytes\": %lld, \"packed_predicted_bytes\": %lld", static_cast<long long>(m.packed_bytes),
                  static_cast<long long>(packed ? packed_predicted : 0));
      std::printf("}\n");
      return 0;
    }
    std::printf("%s (%s, %lld layers, d=%lld, h=%lld): %zu tokens, layer %lld's every step kept\n", a->dir.c_str(),
                c.model_type.c_str(), (long long)c.layers, (long long)c.d_model, (long long)c.heads, tokens.size(),
                (long long)a->layer);
    std::printf("BLAS: %s\nload %.0f ms; forward median %.1f ms (min %.1f, max %.1f) over %d runs; layer trace %s\n",
                blas.summary().c_str(), load_ms, median, ms.front(), ms.back(), a->repeats, format_bytes(held).c_str());
    if (a->whole)
      std::printf("whole pass, every step of every block kept: median %.1f ms (%.2fx the single-layer pass); traces %s\n",
                  whole_median, whole_median / median, format_bytes(whole_held).c_str());
    if (a->floor)
      std::printf("GEMM floor (the pass's matrix products alone, %.2f GFLOP): median %.1f ms; the pass runs at %.0f%% of it\n",
                  floor->flops() / 1e9, floor_median, 100 * floor_median / median);
    if (!step_ms.empty())
      std::printf("decode: %.2f tokens/s (median of %zu single-token calls through the KV caches)\n", decode_rate, step_ms.size());
    if (a->floor && !step_ms.empty())
      std::printf("decode GEMM floor (one step's products alone): %.2f tokens/s\n", decode_floor_rate);
    if (packed)
      std::printf("weights packed once: %s (predicted %s); float32 copies kept for W_O and the unembedding only\n",
                  format_bytes(m.packed_bytes).c_str(), format_bytes(packed_predicted).c_str());
    else
      std::printf("weights not packed (%s): products on sgemm\n",
                  m.widened_per_layer() ? "widened per layer from F16 / BF16" : "this build packs none");
    return 0;
  };
}

}  // namespace attnsim::cli
