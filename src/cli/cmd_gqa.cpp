// attnsim-cli gqa-convert: a trained MHA checkpoint -> GQA by mean-pooling its K/V heads
// (model/gqa.h), measured before conversion, right after it, and after a short uptraining
// with the checkpoint's own recipe; writes the converted (uptrained) checkpoint.
//   --kv-heads 2       one conversion, --out DIR is the checkpoint
//   --kv-heads 2,1     one table row per g, --out DIR/kv-heads-2, DIR/kv-heads-1
//   --kv-heads all     every g dividing the model's K/V heads (h/2, h/4, ..., 1)
// Every input is checked, and every conversion made, before the slow part: bad input is one
// line and exit 2 with nothing written.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>

#include "commands.h"
#include "engine/checked.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "model/formats/checkpoint.h"
#include "model/training/gqa.h"
#include "model/training/memory.h"
#include "model/training/train.h"
#include "options.h"
#include "table.h"

namespace fs = std::filesystem;

namespace attnsim::cli {

namespace {

constexpr int64_t kEvalSequences = 256;  // of the training task, seed 777 (evaluate_repeats' default)
constexpr uint64_t kEvalSeed = 777;

// What the model report measures (model_report.cpp), on data fixed by kEvalSeed.
struct Quality {
  model::LossStats task;              // cross_entropy on kEvalSequences of the recipe's task
  double trained_accuracy = 0;        // evaluate_repeats pooled over lengths the recipe trains on
  std::optional<double> unseen_accuracy;  // ... and over the lengths it never trained on
};

Quality measure(const model::Model& m, const model::TaskSpec& task) {
  Quality q;
  const model::Batch b = model::make_batch(task, kEvalSequences, kEvalSeed, 0);
  q.task = model::cross_entropy(model::forward_finite(m, b).logits, b);
  std::vector<int64_t> repeats;  // the report's lengths: every one a sequence holds twice
  for (int64_t L = 2; 2 * L + 1 <= m.config.seq_len && L < m.config.vocab; ++L) repeats.push_back(L);
  std::vector<model::RepeatEval> seen, unseen;
  for (const model::RepeatEval& e : model::evaluate_repeats(m, repeats, kEvalSequences, kEvalSeed))
    (task.trains_on(e.repeat) ? seen : unseen).push_back(e);
  q.trained_accuracy = model::pooled_accuracy(seen);
  if (!unseen.empty()) q.unseen_accuracy = model::pooled_accuracy(unseen);
  return q;
}

nlohmann::json quality_json(const Quality& q) {
  nlohmann::json j{{"loss", q.task.all.loss()},
                   {"loss_repeat", q.task.parts[model::kRepeat].loss()},
                   {"accuracy_repeat", q.task.parts[model::kRepeat].accuracy()},
                   {"accuracy_trained_lengths", q.trained_accuracy}};
  if (q.unseen_accuracy) j["accuracy_unseen_lengths"] = *q.unseen_accuracy;
  return j;
}

std::vector<std::string> quality_cells(const Quality& q) {
  auto num = [](double v, const char* f) {
    char s[32];
    std::snprintf(s, sizeof s, f, v);
    return std::string(s);
  };
  return {num(q.task.all.loss(), "%.4f"), num(q.task.parts[model::kRepeat].loss(), "%.4f"),
          num(100 * q.task.parts[model::kRepeat].accuracy(), "%.1f%%"), num(100 * q.trained_accuracy, "%.1f%%"),
          q.unseen_accuracy ? num(100 * *q.unseen_accuracy, "%.1f%%") : "-"};
}

// "2" or "2,1" or "all" (every g < g0 dividing g0, largest first).
std::vector<int64_t> parse_kv_heads(const std::string& text, int64_t g0) {
  std::vector<int64_t> out;
  if (text == "all") {
    for (int64_t g = g0 - 1; g >= 1; --g)
      if (g0 % g == 0) out.push_back(g);
    if (out.empty()) throw Error("--kv-heads all: the model has a single K/V head already; nothing to convert");
    return out;
  }
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      throw Error("--kv-heads: '" + item + "' is not a whole number (e.g. --kv-heads 2, 2,1 or all)");
    if (item.size() > 9)  // a digit string past any head count; stoll would overflow at 20 digits
      throw Error("--kv-heads " + item + ": too many K/V heads (the model has " + std::to_string(g0) + ")");
    const int64_t g = std::stoll(item);
    if (std::find(out.begin(), out.end(), g) != out.end()) throw Error("--kv-heads: " + item + " is listed twice");
    out.push_back(g);
  }
  if (out.empty()) throw Error("--kv-heads: no value given (e.g. --kv-heads 2, 2,1 or all)");
  return out;
}

// Refuses, before any work, an --out that the final save would refuse: a file, a folder
// that is neither empty nor a checkpoint (when `checkpoint`), or a place we cannot write.
void check_out(const fs::path& dir, bool checkpoint) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw Error(dir.string() + ": exists and is not a folder; choose another --out");
    if (checkpoint && !fs::exists(dir / "model.json", ec) && !fs::is_empty(dir, ec))
      throw Error(dir.string() + ": exists and is not a checkpoint; choose another --out");
  }
  fs::path parent = fs::absolute(dir, ec).parent_path();  // the folder the new one is renamed into
  while (!parent.empty() && !fs::exists(parent, ec) && parent != parent.parent_path()) parent = parent.parent_path();
  // a probe folder made and removed at once: access() would pass root on a folder it cannot write (/proc)
  const fs::path probe = parent / (".attnsim-probe-" + std::to_string(getpid()));
  if (!fs::is_directory(parent, ec) || !fs::create_directory(probe, ec))
    throw Error(dir.string() + ": cannot write there (" + parent.string() + " is not a writable folder)");
  fs::remove(probe, ec);
}

struct Row {
  int64_t g = 0;
  model::Model model;
  Quality converted;
  std::optional<Quality> uptrained;
  fs::path out;
};

struct Args {
  std::string model_dir, kv_heads, out, mem_limit;
  int64_t uptrain = 0;
  bool json = false;
};

// The peak, from the header before any .npy is read: the original and every conversion held
// at once, the largest evaluation (its 256-sequence forward or the report's repeat scoring),
// and one uptraining step.
void check_memory(const Args& a, const model::ModelConfig& c, size_t conversions,
                  const std::optional<model::TrainOptions>& recipe) {
  int64_t need = checked_mul(model::checkpoint_bytes(c), static_cast<int64_t>(conversions) + 1);
  need = checked_add(need, std::max(model::predict_forward_bytes(c, kEvalSequences, c.seq_len),
                                    model::predict_report_bytes(c)));
  if (a.uptrain > 0 && recipe) need = checked_add(need, model::predict_train_bytes(c, *recipe));
  check_fits(need, a.mem_limit.empty() ? 0 : parse_size(a.mem_limit), "converting this model", "");
}

int run_gqa_convert(const Args& a) {
  {
    const model::CheckpointHeader header = model::read_checkpoint_header(a.model_dir);
    check_memory(a, header.config, parse_kv_heads(a.kv_heads, header.config.kv_group_count()).size(),
                 model::recipe_options(header.meta));
  }
  nlohmann::json meta;
  const model::Model original = model::load_checkpoint(a.model_dir, &meta);
  const model::ModelConfig& c = original.config;
  std::optional<model::TrainOptions> recipe = model::recipe_options(meta);
  if (!recipe)
    throw Error(a.model_dir + "/model.json: no induction training recipe (\"train\": tasks, repeats, batch, lr, ...) "
                "to evaluate and uptrain with; convert a checkpoint written by attnsim-cli train");
  recipe->task.vocab = c.vocab;
  recipe->task.len = c.seq_len;
  model::validate(recipe->task);
  const int64_t g0 = c.kv_group_count();
  const std::vector<int64_t> gs = parse_kv_heads(a.kv_heads, g0);
  const bool many = gs.size() > 1 || a.kv_heads == "all";
  std::vector<Row> rows;
  for (int64_t g : gs) rows.push_back({g, model::convert_to_gqa(original, g), {}, {}, {}});
  if (!a.out.empty()) {
    if (many) check_out(a.out, false);
    for (Row& r : rows) {
      r.out = many ? fs::path(a.out) / ("kv-heads-" + std::to_string(r.g)) : fs::path(a.out);
      check_out(r.out, true);
    }
  }

  // uptraining: the recipe's data, batch and AdamW, a fresh schedule of `uptrain` steps whose
  // warm-up is the same fraction of the run as the original's (at least one step)
  model::TrainOptions up = *recipe;
  up.steps = a.uptrain;
  up.adamw.warmup = std::max<int64_t>(1, std::llround(static_cast<double>(a.uptrain) * static_cast<double>(recipe->adamw.warmup) /
                                                      static_cast<double>(std::max<int64_t>(recipe->steps, 1))));
  up.adamw.total = 0;
  up.score_every = 0;
  const Quality before = measure(original, recipe->task);
  for (Row& r : rows) {
    r.converted = measure(r.model, recipe->task);
    if (a.uptrain > 0) {
      std::fprintf(stderr, "kv-heads %lld: uptraining %lld steps...\n", static_cast<long long>(r.g),
                   static_cast<long long>(a.uptrain));
      model::train(r.model, up);
      r.uptrained = measure(r.model, recipe->task);
    }
  }

  const int64_t dk = c.head_dim();
  auto cache_per_token = [&](int64_t g) { return 2 * c.layers * g * dk * 4; };  // K and V, float32, every layer
  auto kind = [&](int64_t g) { return std::to_string(g) + (g == c.heads ? " (MHA)" : g == 1 ? " (MQA)" : " (GQA)"); };
  nlohmann::json out{{"model", a.model_dir}, {"heads", c.heads}, {"kv_heads_from", g0}, {"layers", c.layers},
                     {"head_dim", dk}, {"trained_steps", recipe->steps}, {"uptrain_steps", a.uptrain},
                     {"uptrain_warmup", a.uptrain > 0 ? up.adamw.warmup : 0}, {"eval_sequences", kEvalSequences},
                     {"eval_seed", kEvalSeed}, {"before", quality_json(before)},
                     {"kv_cache_bytes_per_token_before", cache_per_token(g0)}, {"rows", nlohmann::json::array()}};
  for (Row& r : rows) {
    nlohmann::json j{{"kv_heads", r.g}, {"params", model::param_count(r.model.config)},
                     {"kv_cache_bytes_per_token", cache_per_token(r.g)}, {"converted", quality_json(r.converted)}};
    if (r.uptrained) j["uptrained"] = quality_json(*r.uptrained);
    if (!r.out.empty()) {
      nlohmann::json m = meta;  // the recipe stays, so heads / gqa-convert read the new checkpoint too
      m["step"] = meta.value("step", recipe->steps) + a.uptrain;
      m["gqa"] = {{"from", a.model_dir}, {"kv_heads_from", g0}, {"uptrain_steps", a.uptrain},
                  {"before", out["before"]}, {"converted", j["converted"]}};
      if (r.uptrained) m["gqa"]["uptrained"] = j["uptrained"];
      model::save_checkpoint(r.model, r.out.string(), m);
      j["out"] = r.out.string();
    }
    out["rows"].push_back(j);
  }
  if (a.json) {
    std::printf("%s\n", out.dump(1).c_str());
    return 0;
  }
  std::printf("gqa-convert %s: %lld layers, %lld query heads of d_k = %lld, %lld K/V heads, trained %lld steps\n",
              a.model_dir.c_str(), static_cast<long long>(c.layers), static_cast<long long>(c.heads),
              static_cast<long long>(dk), static_cast<long long>(g0), static_cast<long long>(recipe->steps));
  std::printf("each K/V head = the mean of its group's heads (Ainslie et al. 2023); W_Q, W_O unchanged\n");
  if (a.uptrain > 0)
    std::printf("uptrained %lld steps (%.1f%% of the original) with its recipe: lr %g, batch %lld, warm-up %lld\n",
                static_cast<long long>(a.uptrain), 100.0 * a.uptrain / std::max<int64_t>(recipe->steps, 1),
                recipe->adamw.lr, static_cast<long long>(recipe->batch), static_cast<long long>(up.adamw.warmup));
  std::printf("loss: %lld held-out sequences of the training task (seed %llu); accuracy: the repeated part, "
              "and pooled over repeat lengths trained on / never trained on\n\n",
              static_cast<long long>(kEvalSequences), static_cast<unsigned long long>(kEvalSeed));
  Table t({"kv-heads", "K/V cache/token", "stage", "loss", "loss repeat", "acc repeat", "acc trained L", "acc unseen L"});
  auto add = [&](const std::string& g, const std::string& bytes, const std::string& stage, const Quality& q) {
    std::vector<std::string> cells{g, bytes, stage};
    for (std::string& s : quality_cells(q)) cells.push_back(std::move(s));
    t.add(std::move(cells));
  };
  add(kind(g0), std::to_string(cache_per_token(g0)) + " B", "original", before);
  for (const Row& r : rows) {
    add(kind(r.g), std::to_string(cache_per_token(r.g)) + " B", "mean-pooled", r.converted);
    if (r.uptrained) add("", "", "+ uptrained " + std::to_string(a.uptrain), *r.uptrained);
  }
  t.print();
  for (const Row& r : rows)
    if (!r.out.empty()) std::printf("wrote %s\n", r.out.string().c_str());
  return 0;
}

}  // namespace

Runner add_gqa_convert_command(CLI::App& app) {
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("gqa-convert", "convert a trained checkpoint to GQA/MQA by mean-pooling K/V heads; "
                                                    "loss before, after, and after uptraining");
  cmd->add_option("--model", a->model_dir, "checkpoint folder (written by train)")->required()->check(not_empty());
  cmd->add_option("--kv-heads", a->kv_heads, "K/V heads g dividing the model's: 2, a list 2,1, or all")->required();
  cmd->add_option("--out", a->out, "write the converted checkpoint here (a list or all: one kv-heads-G folder per g)")
      ->check(not_empty());
  cmd->add_option("--uptrain", a->uptrain, "then train this many steps with the checkpoint's recipe (0 = none)")
      ->capture_default_str()->check(whole_number(0, 10'000'000));  // as train --steps
  cmd->add_option("--mem-limit", a->mem_limit, "refuse models whose conversion needs more (e.g. 2G)")
      ->check(mem_limit_size());
  cmd->add_flag("--json", a->json, "print JSON instead of the table");
  return [a] { return run_gqa_convert(*a); };
}

}  // namespace attnsim::cli
