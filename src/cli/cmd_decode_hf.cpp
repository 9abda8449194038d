// decode on a Hugging Face folder (hf_commands.h): prefill the prompt through every layer's
// KV cache, then one token at a time, greedy or sampled at a temperature.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <sstream>

#include "engine/atomic_file.h"
#include "engine/checked.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/mha.h"
#include "engine/trace_json.h"
#include "hf_commands.h"
#include "model/experiments/hf_eval.h"
#include "model/training/memory.h"
#include "staged_out.h"
#include "table.h"

namespace attnsim::cli {

namespace {

struct StepRecord {
  int64_t first_position = 0, fed = 0;
  int32_t next = 0;
  Dims k_cache, scores;  // layer 0's
  double ms = 0;
};

std::string step_dir(const std::string& root, size_t index) {
  std::ostringstream s;
  s << root << "/step_" << std::setw(4) << std::setfill('0') << index;
  return s.str();
}

}  // namespace

int run_hf_decode(const std::string& dir, const HfInput& in, const HfDecodeArgs& a) {
  const model::hf::HfConfig c = model::hf::read_hf_config(dir);
  const model::hf::HfText text = model::hf::open_hf_text(dir, !in.text.empty());
  const std::vector<int32_t> prompt = hf_input_tokens(in, dir, c, text);
  const int64_t T = static_cast<int64_t>(prompt.size()), t_max = checked_add(T, a.steps, "prompt + steps");
  if (t_max > c.max_positions)
    throw Error("prompt + steps = " + std::to_string(t_max) + " tokens is longer than the model's " +
                std::to_string(c.max_positions) + " positions");
  model::validate_sampling(a.sampling, c.vocab);
  // the caches, a prefill's traces and the logits per call; with --dump every call's traces too
  const int64_t cache = (Size(c.layers) * 2 * c.kv_heads * c.head_dim() * t_max * 4).value();
  const int64_t call = model::hf::predict_hf_forward_bytes(c, T, true);
  const int64_t kept = a.dump.empty() ? 0 : (Size(a.steps) * c.layers * predict_trace_bytes(model::hf::hf_attention_config(c, 1, 0))).value();
  const model::hf::HfModel m = model::hf::load_hf_checked(dir, checked_add(checked_add(cache, call), kept), a.mem_limit,
                                               "this decode (weights, caches and traces)");
  if (!a.dump.empty()) check_writable_folder(a.dump, false);

  model::hf::HfDecoder dec(m, t_max);
  std::vector<int32_t> tokens = prompt, generated;
  std::vector<StepRecord> records;
  std::vector<std::vector<Trace>> dumped;  // per call, per layer (with --dump)
  auto run_call = [&](const std::vector<int32_t>& fed) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<Trace> traces;
    StepRecord r;
    r.first_position = dec.length();
    r.fed = static_cast<int64_t>(fed.size());
    const std::vector<float> logits = dec.feed(fed, &traces);
    model::SamplingOptions s = a.sampling;
    s.step = static_cast<int64_t>(records.size());  // the draw's index in the seeded stream
    r.next = model::sample_row(logits.data(), c.vocab, s).next;
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    r.k_cache = traces[0].at("k_cache").out.shape();
    r.scores = traces[0].at("scores").out.shape();
    records.push_back(r);
    if (!a.dump.empty()) dumped.push_back(std::move(traces));
    return r.next;
  };
  if (a.steps > 0) {
    int32_t next = run_call(prompt);
    while (true) {
      generated.push_back(next);
      tokens.push_back(next);
      if (static_cast<int64_t>(generated.size()) == a.steps) break;
      next = run_call({next});
    }
  }
  if (!a.dump.empty())
    write_folder_atomically(a.dump, [&](const std::string& root) {
      for (size_t i = 0; i < dumped.size(); ++i)
        for (size_t l = 0; l < dumped[i].size(); ++l) {
          const std::string ld = step_dir(root, i) + "/layer_" + std::to_string(l);
          std::filesystem::create_directories(ld);
          dump_steps(dumped[i][l], ld);
          const MhaConfig call = model::hf::hf_attention_config(c, records[i].fed, records[i].first_position);
          write_file_atomically(ld + "/trace.json", trace_to_json(call, dumped[i][l]).dump(2) + "\n");
        }
    });

  if (a.json) {
    nlohmann::json j;
    j["config"] = {{"model", dir}, {"model_type", c.model_type}, {"d_model", c.d_model}, {"heads", c.heads},
                   {"kv_heads", c.kv_heads}, {"head_dim", c.head_dim()}, {"layers", c.layers}, {"t_max", t_max},
                   {"rope_theta", c.rope_theta}, {"temperature", a.sampling.temperature},
                   {"top_k", a.sampling.top_k > 0 ? a.sampling.top_k : c.vocab}, {"top_p", a.sampling.top_p},
                   {"seed", a.sampling.seed}};
    j["prompt"] = prompt;
    j["generated"] = generated;
    j["tokens"] = tokens;
    if (text.tokenizer) j["text"] = text.text(tokens);
    nlohmann::json steps = nlohmann::json::array();
    for (size_t i = 0; i < records.size(); ++i)
      steps.push_back({{"index", i}, {"first_position", records[i].first_position}, {"fed", records[i].fed},
                       {"next", records[i].next}, {"k_cache_shape", records[i].k_cache},
                       {"scores_shape", records[i].scores}, {"ms", records[i].ms}});
    j["steps"] = steps;
    j["cache"] = {{"storage_bytes", dec.cache_bytes()}, {"bytes_per_token", cache / t_max}};
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());  // generated bytes may not be UTF-8
    return 0;
  }
  std::printf("decode: %s (%s, d_model=%lld h=%lld kv-heads=%lld d_k=%lld layers=%lld), T_max=%lld, %s\n\n", dir.c_str(),
              c.model_type.c_str(), (long long)c.d_model, (long long)c.heads, (long long)c.kv_heads, (long long)c.head_dim(),
              (long long)c.layers, (long long)t_max,
              a.sampling.temperature > 0
                  ? ("temperature " + std::to_string(a.sampling.temperature) + ", top-k " +
                     std::to_string(a.sampling.top_k > 0 ? a.sampling.top_k : c.vocab) + ", top-p " +
                     std::to_string(a.sampling.top_p) + ", seed " + std::to_string(a.sampling.seed)).c_str()
                  : "greedy");
  Table table({"step", "position", "fed", "next", "k_cache", "scores", "ms"});
  for (size_t i = 0; i < records.size(); ++i) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.2f", records[i].ms);
    table.add({std::to_string(i), std::to_string(records[i].first_position), std::to_string(records[i].fed),
               text.label(records[i].next), format_dims(records[i].k_cache), format_dims(records[i].scores), ms});
  }
  table.print();
  std::string ids;
  for (int32_t t : generated) ids += (ids.empty() ? "" : ",") + std::to_string(t);
  if (text.tokenizer) std::printf("\ntext: \"%s\"", one_line(text.text(tokens)).c_str());
  std::printf("\ngenerated: %s\nKV cache, from the real storage: %s\n", ids.c_str(), format_bytes(dec.cache_bytes()).c_str());
  return 0;
}

}  // namespace attnsim::cli
