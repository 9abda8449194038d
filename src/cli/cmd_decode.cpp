// attnsim-cli decode: prefill a prompt, then generate one token at a time through a stack of
// attention layers with a KV cache per layer (contiguous or paged), printing what each
// step appended, read and cost; --dump keeps every step's trace per layer.
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <iomanip>
#include <limits>
#include <sstream>

#include "commands.h"
#include "engine/cost.h"
#include "engine/decode_stack.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "engine/trace_json.h"
#include "hf_commands.h"
#include "model/formats/checkpoint.h"
#include "model/formats/hf_config.h"
#include "model/experiments/decode.h"
#include "model/training/memory.h"
#include "model/formats/checkpoint_text.h"
#include "model/text/tokenizer.h"
#include "options.h"
#include "staged_out.h"
#include "table.h"

namespace attnsim::cli {

namespace {

struct DecodeOptions {
  std::vector<std::string> prompts;
  int64_t steps = 8, d_model = 64, heads = 4, kv_heads = 0, layers = 2, max_len = 0;
  uint64_t seed = 0;
  bool no_bias = false, kv_repeat_copy = false, json = false;
  std::string cache = "contiguous", policy = "full", dump, model, mem_limit;
  HfInput hf;               // a Hugging Face --model's prompt
  model::SamplingOptions sampling;  // a Hugging Face --model: temperature (0 = greedy), top-k, top-p
};

// How tokens read as text: the random stack's printable ASCII, or a trained checkpoint's (the
// toy's alphabet, BOS shown as ^; a language model's tokenizer).
struct Vocabulary {
  std::function<std::vector<int64_t>(const std::string&)> encode;
  std::function<std::string(const std::vector<int64_t>&)> text;
};

Vocabulary ascii_vocabulary() { return {encode_text, decode_text}; }

Vocabulary model_vocabulary(const model::CheckpointText& text) {
  return {[text](const std::string& s) {
            const std::vector<int32_t> t = text.encode(s);
            return std::vector<int64_t>(t.begin(), t.end());
          },
          [text](const std::vector<int64_t>& t) { return text.decode(std::vector<int32_t>(t.begin(), t.end())); }};
}

// "contiguous" -> 0; "paged:16" -> 16; Error otherwise (a block of 0 included).
int64_t parse_cache(const std::string& text) {
  if (text == "contiguous") return 0;
  if (text.rfind("paged:", 0) == 0) {
    const std::string n = text.substr(6);
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(n, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != n.size() || v < 0) throw Error("--cache '" + text + "': the block size must be a number");
    if (v == 0) throw Error("--cache '" + text + "': the block size must be positive, got 0");
    return v;
  }
  throw Error("unknown --cache '" + text + "' (valid: contiguous, paged:BLOCK)");
}

std::string quoted(const Vocabulary& vocab, const std::vector<int64_t>& tokens) {
  std::string s = vocab.text(tokens), out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\\\"") : std::string(1, ch);
  return out + "\"";
}

std::string step_dir(const std::string& root, size_t index) {
  std::ostringstream s;
  s << root << "/step_" << std::setw(4) << std::setfill('0') << index;
  return s.str();
}

void write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  out.close();
  if (!out) throw Error(path + ": cannot write");
}

}  // namespace

Runner add_decode_command(CLI::App& app) {
  auto o = std::make_shared<DecodeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "decode", "prefill a prompt, then decode token by token over a per-layer KV cache (random weights or --model)");
  // Refused, not clamped or wrapped, with the validators every command shares (options.h): a
  // size or count given as 0 is an error, never "not given"
  const CLI::Validator size = whole_number(1, std::numeric_limits<int64_t>::max());
  cmd->add_option("--model", o->model,
                  "a trained checkpoint (assets/models/induction; or a language model, assets/models/wordnet-lm-s1, whose "
                  "norms and MLP run around each cached call): its sizes, weights and alphabet or tokenizer; "
                  "or a Hugging Face folder (then --tokens or --text is the prompt)")
      ->check(not_empty());
  add_hf_input_options(*cmd, o->hf, "a Hugging Face --model's prompt");
  cmd->add_option("--temperature", o->sampling.temperature,
                  "a Hugging Face --model: sample at this temperature, up to 100; 0 means greedy (the arg max, lowest id on ties)")
      ->capture_default_str();
  cmd->add_option("--top-k", o->sampling.top_k, "a Hugging Face --model, sampling: keep the K most likely tokens (1..vocabulary; default all)")
      ->check(whole_number(1, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--top-p", o->sampling.top_p,
                  "a Hugging Face --model, sampling: keep the most likely tokens until their mass reaches P, in (0, 1]")
      ->capture_default_str();
  cmd->add_option("--prompt", o->prompts, "prompt text, printable ASCII; repeat for a batch (paged: any lengths)");
  cmd->add_option("--steps", o->steps, "tokens to generate after the prompt")->capture_default_str()
      ->check(whole_number(0, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--d-model", o->d_model, "model width")->capture_default_str()->check(size);
  cmd->add_option("--heads", o->heads, "query heads h")->capture_default_str()->check(size);
  cmd->add_option("--kv-heads", o->kv_heads, "key/value heads g dividing h (GQA; 1 = MQA; default h)")->check(size);
  cmd->add_flag("--kv-repeat-copy", o->kv_repeat_copy, "copy K/V per query head (repeat_interleave) instead of the stride-0 view");
  cmd->add_option("--layers", o->layers, "attention layers, each with its own cache")->capture_default_str()->check(size);
  cmd->add_option("--max-len", o->max_len, "T_max: the longest sequence the caches hold (default prompt + steps)")->check(size);
  cmd->add_option("--cache", o->cache, "contiguous or paged:BLOCK")->capture_default_str();
  cmd->add_option("--policy", o->policy, "full, window=W or sink=S,window=W (contiguous cache)")->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the random weights and embeddings (a Hugging Face --model: of the sampling)")->capture_default_str()->check(seed_number());
  cmd->add_flag("--no-bias", o->no_bias, "projections without bias");
  cmd->add_option("--dump", o->dump, "write DIR/step_NNNN/[seq_S/]layer_L/<step>.npy + trace.json for every step")
      ->check(not_empty());
  cmd->add_option("--mem-limit", o->mem_limit, "refuse runs whose weights, caches and kept traces need more (e.g. 2G)")
      ->check(mem_limit_size());
  cmd->add_flag("--json", o->json, "print the run as JSON");
  for (const char* size : {"--d-model", "--heads", "--kv-heads", "--layers", "--no-bias"})
    cmd->get_option(size)->excludes("--model");
  return [o, cmd] {
    if (!o->model.empty() && model::hf::is_hf_model_dir(o->model)) {
      if (!o->prompts.empty()) throw Error("--prompt is the toy models' text; a Hugging Face --model takes --tokens or --text");
      for (const char* cache_option : {"--policy", "--max-len", "--cache", "--kv-repeat-copy"})
        if (cmd->count(cache_option) > 0)
          throw Error(std::string(cache_option) + " shapes the toy models' caches; a Hugging Face --model decodes with one "
                      "contiguous cache of prompt + steps per layer, K/V heads as its config has them");
      HfDecodeArgs a;
      a.steps = o->steps;
      a.sampling = o->sampling;
      a.sampling.seed = o->seed;
      a.mem_limit = o->mem_limit.empty() ? 0 : parse_size(o->mem_limit);
      a.json = o->json;
      a.dump = o->dump;
      return run_hf_decode(o->model, o->hf, a);
    }
    refuse_hf_input(o->hf);
    for (const char* sampling : {"--temperature", "--top-k", "--top-p"})
      if (cmd->count(sampling) > 0) throw Error(std::string(sampling) + " takes a Hugging Face --model (the toy decode is greedy)");
    if (!o->model.empty() && o->seed != 0)
      throw Error("--seed seeds random weights or a Hugging Face model's sampling; a trained checkpoint has its own weights");
    // the checkpoint's header first: its sizes and alphabet, and its memory, before any .npy
    std::optional<model::CheckpointHeader> header;
    if (!o->model.empty()) header = model::read_checkpoint_header(o->model);
    const std::optional<model::CheckpointText> text =
        header ? std::optional(model::checkpoint_text(o->model, header->config)) : std::nullopt;
    const Vocabulary vocab = text ? model_vocabulary(*text) : ascii_vocabulary();
    // a trained induction model continues a repeat: "...qwerty" -> "uiopasdfgh"; a language
    // model a gloss
    if (o->prompts.empty())
      o->prompts = {!header ? "Attention is" : text->tokenizer ? "the act of moving from one place to" : "qwertyuiopasdfghqwerty"};
    std::vector<std::vector<int64_t>> prompts;
    int64_t longest = 0;
    for (const auto& p : o->prompts) {
      prompts.push_back(vocab.encode(p));
      longest = std::max<int64_t>(longest, static_cast<int64_t>(prompts.back().size()));
    }
    const int64_t t_max = o->max_len > 0 ? o->max_len : checked_add(longest, o->steps, "prompt + steps");
    StackConfig sc;
    if (header) {
      sc = model::decode_stack_config(model::Model{header->config, {}}, t_max, parse_cache_policy(o->policy));
      sc.attn.kv_repeat_copy = o->kv_repeat_copy;
    } else {
      sc.attn.d_model = o->d_model;
      sc.attn.heads = o->heads;
      sc.attn.kv_heads = o->kv_heads;
      sc.attn.kv_repeat_copy = o->kv_repeat_copy;
      sc.attn.bias = !o->no_bias;
      sc.attn.seed = o->seed;
      sc.layers = o->layers;
      sc.t_max = t_max;
      sc.policy = parse_cache_policy(o->policy);
    }
    sc.block_size = parse_cache(o->cache);
    if (!o->mem_limit.empty()) sc.attn.mem_limit = parse_size(o->mem_limit);
    // prompt tokens past the first chunk, then the generated ones
    int64_t calls = 0;
    for (const auto& p : prompts) calls = std::max<int64_t>(calls, checked_add(static_cast<int64_t>(p.size()), o->steps, "prompt + steps"));
    if (calls > sc.t_max)
      throw Error("prompt + steps = " + std::to_string(calls) + " tokens is longer than T_max " +
                  std::to_string(sc.t_max) + " (--max-len)");
    validate(sc, prompts);  // sizes, prompts, and the caches alone against the limit
    int64_t need = predict_decode_bytes(sc, prompts, calls, !header);
    if (header) {  // the weights, and every fed row's norms, residuals and MLP in the kept traces
      int64_t rows = 0;
      for (const auto& p : prompts) rows = checked_add(rows, checked_add(static_cast<int64_t>(p.size()), o->steps), "rows");
      need = checked_add(need, model::checkpoint_bytes(header->config), "decode memory");
      need = checked_add(need, model::predict_block_bytes(header->config, rows), "decode memory");
    }
    check_fits(need, sc.attn.mem_limit, "this decode (weights, caches and every step's traces)",
                      "fewer --steps, a shorter prompt, or a smaller model");
    if (!o->dump.empty()) check_writable_folder(o->dump, false);  // before the decode, not after it
    std::optional<model::Model> trained;
    if (header) trained = model::load_checkpoint(o->model);
    Decoder dec = trained ? Decoder(sc, prompts, model::decode_stack_weights(*trained)) : Decoder(sc, prompts);
    const MhaConfig& a = sc.attn;
    const int64_t g = a.kv_group_count(), per_token = 2 * sc.layers * a.kv_dim() * 4;

    std::vector<DecodeStep> steps;
    std::vector<double> ms;
    Table table({"step", "position", "fed", "next", "k_cache", "scores", "appended", "cache used", "ms"});
    auto record = [&](DecodeStep st, double t_ms) {
      const Trace& t0 = st.traces[0][0];
      // sequence 0's rows of this call (a paged prefill feeds each prompt whole)
      const std::vector<int64_t>& seq0 = dec.tokens(0);
      const std::string fed = quoted(vocab, std::vector<int64_t>(seq0.end() - st.fed_rows[0], seq0.end()));
      int64_t fed_rows = 0;
      for (int64_t n : st.fed_rows) fed_rows += n;
      table.add({std::to_string(steps.size()), std::to_string(st.first_position), fed, quoted(vocab, {st.next[0]}),
                 format_dims(t0.at("k_cache").out.shape()), format_dims(t0.at("scores").out.shape()),
                 human_bytes(fed_rows * per_token),
                 human_bytes(dec.cache_used_bytes()), [&] {
                   char b[32];
                   std::snprintf(b, sizeof b, "%.2f", t_ms);
                   return std::string(b);
                 }()});
      steps.push_back(std::move(st));
      ms.push_back(t_ms);
    };
    auto timed = [&](auto&& fn) {
      const auto start = std::chrono::steady_clock::now();
      DecodeStep st = fn();
      record(std::move(st), std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    };
    timed([&] { return dec.prefill(); });
    while (dec.length() < calls) timed([&] { return dec.step(); });

    if (!o->dump.empty())
      write_folder_atomically(o->dump, [&](const std::string& dir) {
        for (size_t i = 0; i < steps.size(); ++i) {
          const std::string sd = step_dir(dir, i);
          for (size_t u = 0; u < steps[i].traces.size(); ++u)
            for (size_t l = 0; l < steps[i].traces[u].size(); ++l) {
              const std::string ld = sd + (dec.paged() ? "/seq_" + std::to_string(u) : "") + "/layer_" + std::to_string(l);
              std::filesystem::create_directories(ld);
              const Trace& t = steps[i].traces[u][l];
              dump_steps(t, ld);
              MhaConfig c = cached_call_config(a, t.at("query").out.size(0), t.at("query").out.size(1));
              write_json(ld + "/trace.json", trace_to_json(c, t));
            }
        }
      });

    CostConfig cc;
    cc.d_model = a.d_model, cc.heads = a.heads, cc.kv_heads = g, cc.layers = sc.layers;
    cc.batch = dec.sequences(), cc.seq = dec.paged() ? sc.t_max : sc.policy.slots(sc.t_max);
    const Cost cost = compute_cost(cc);
    const int64_t storage = dec.cache_storage_bytes();
    const int64_t formula = dec.paged() ? dec.block_pool().blocks() * sc.block_size * cost.kv_bytes_per_token
                                        : cost.kv_cache_bytes_grouped;
    if (o->json) {
      nlohmann::json j;
      j["config"] = {{"d_model", a.d_model},  {"heads", a.heads},  {"kv_heads", g},
                     {"head_dim", a.head_dim()}, {"layers", sc.layers}, {"t_max", sc.t_max},
                     {"cache", o->cache},      {"policy", sc.policy.text()}, {"seed", a.seed},
                     {"weights", trained ? o->model : std::string("random")}};
      nlohmann::json js = nlohmann::json::array();
      for (size_t i = 0; i < steps.size(); ++i) {
        const Trace& t0 = steps[i].traces[0][0];
        js.push_back({{"index", i},
                      {"first_position", steps[i].first_position},
                      {"rows", steps[i].rows},
                      {"fed_rows", steps[i].fed_rows},
                      {"generated", steps[i].generated},
                      {"fed", steps[i].fed},
                      {"next", steps[i].next},
                      {"k_cache_shape", t0.at("k_cache").out.shape()},
                      {"scores_shape", t0.at("scores").out.shape()},
                      {"append_bytes_per_layer", t0.at("k_cache_append").copied_bytes + t0.at("v_cache_append").copied_bytes},
                      {"ms", ms[i]}});
      }
      j["steps"] = js;
      nlohmann::json texts = nlohmann::json::array();
      for (int64_t s = 0; s < dec.sequences(); ++s) texts.push_back(vocab.text(dec.tokens(s)));
      j["text"] = texts;
      j["cache"] = {{"storage_bytes", storage},
                    {"formula_bytes", formula},
                    {"bytes_per_token", cost.kv_bytes_per_token},
                    {"used_bytes", dec.cache_used_bytes()}};
      if (dec.paged()) {
        nlohmann::json tables = nlohmann::json::array();
        for (const auto& t : dec.tables()) tables.push_back({{"blocks", t.blocks}, {"length", t.length}});
        j["cache"]["block_tables"] = tables;
        j["cache"]["free_list"] = dec.block_pool().free_list();
      }
      std::printf("%s\n", j.dump(2).c_str());
      return 0;
    }
    const std::string weights = trained ? "weights of " + o->model : "random weights (seed " + std::to_string(a.seed) + ")";
    std::printf("decode: d_model=%lld h=%lld kv-heads=%lld (%s) d_k=%lld layers=%lld T_max=%lld cache=%s policy=%s, %s\n\n",
                (long long)a.d_model, (long long)a.heads, (long long)g,
                g == a.heads ? "MHA" : g == 1 ? "MQA" : "GQA", (long long)a.head_dim(), (long long)sc.layers,
                (long long)sc.t_max, o->cache.c_str(), sc.policy.text().c_str(), weights.c_str());
    table.print();
    for (int64_t s = 0; s < dec.sequences(); ++s)
      std::printf("\nsequence %lld: %s  (prompt %zu tokens%s)", (long long)s, quoted(vocab, dec.tokens(s)).c_str(),
                  dec.prompt(s).size(), trained ? "" : ", random weights: the text means nothing");
    std::printf("\n\nKV cache, from the real storage: %s allocated, %s used\n", format_bytes(storage).c_str(),
                format_bytes(dec.cache_used_bytes()).c_str());
    std::printf("  per token: layers·2·g·d_k·4 = %lld·2·%lld·%lld·4 = %s\n", (long long)sc.layers, (long long)g,
                (long long)a.head_dim(), format_bytes(cost.kv_bytes_per_token).c_str());
    if (dec.paged()) {
      std::printf("  pool: %lld blocks of %lld positions = %s (%s)\n", (long long)dec.block_pool().blocks(),
                  (long long)sc.block_size, format_bytes(formula).c_str(), storage == formula ? "equal" : "DIFFERENT");
      for (int64_t s = 0; s < dec.sequences(); ++s) {
        std::string blocks;
        for (int64_t b : dec.tables()[s].blocks) blocks += (blocks.empty() ? "" : ", ") + std::to_string(b);
        std::printf("  sequence %lld: %lld tokens in blocks [%s]\n", (long long)s, (long long)dec.tables()[s].length,
                    blocks.c_str());
      }
      std::string free_list;
      for (int64_t b : dec.block_pool().free_list()) free_list += (free_list.empty() ? "" : ", ") + std::to_string(b);
      std::printf("  free list: [%s]\n", free_list.c_str());
    } else {
      std::printf("  formula B·layers·2·g·slots·d_k·4 with %lld slots = %s (%s)\n", (long long)cc.seq,
                  format_bytes(formula).c_str(), storage == formula ? "equal" : "DIFFERENT");
    }
    return 0;
  };
}

}  // namespace attnsim::cli
