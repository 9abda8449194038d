// model.* quantities on shipped checkpoints. See model_quantity.h and quantity.h.
#include "lessons/model_quantity.h"
#include "lessons/text_quantity.h"
#include "lessons/whole_quantity.h"

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <nlohmann/json.hpp>

#include "engine/error.h"
#include "engine/user_dirs.h"
#include "engine/nesting.h"
#include "engine/read_file.h"
#include "model/experiments/ablate.h"
#include "model/experiments/baselines.h"
#include "model/formats/checkpoint.h"
#include "model/experiments/experiments.h"
#include "model/training/gqa.h"
#include "model/training/heads.h"
#include "model/training/tasks.h"
#include "model/training/train.h"

namespace attnsim::lessons {

namespace fs = std::filesystem;

const std::vector<std::string> kModelFields = [] {
  std::vector<std::string> fields = {
    // the checkpoint's sizes and step
    "step", "params", "d_model", "heads", "layers", "head_dim",
    // its own K/V heads (g; = heads for MHA), and for a `gqa-convert --out` checkpoint the
    // steps it was uptrained after mean-pooling (0 for any other)
    "kv_groups", "uptrain_steps",
    // one head (layer, head): per-target-row scores on model::scoring_batch, its label
    "previous", "induction", "duplicate", "first", "first_contribution", "role", "layer", "head",
    // every head; gap_*: the head whose weight on position 0 (first) exceeds what position 0
    // contributes to its output (first_contribution) the most: its layer, head, both shares
    // and their difference (0 when every position's W_O v is as long as the others')
    "best_previous", "best_induction", "role_count", "gap_layer", "gap_head", "gap_first", "gap_contribution",
    "gap_size",
    // the same gap over every head, so a claim about its direction can fail: how many heads
    // put more weight on position 0 than it contributes (gap_up), how many less (gap_down),
    // the gap's mean weighted by each head's weight on position 0 (gap_mean: a head that
    // barely looks at BOS says little about it), and how many heads there are (head_count)
    "gap_up", "gap_down", "gap_mean", "head_count",
    // every head's mean row entropy (nats) on the scoring batch, and the same of uniform rows
    // (ln(i+1) at row i: the flattest a causal row can be); init_mean_entropy: mean_entropy of
    // the same config's untrained weights (init_model with its seed: the run's step 0), so a
    // flat trained head can be told from one that never left its starting point
    "mean_entropy", "uniform_entropy", "init_mean_entropy",
    // on model::ablation_batch, with `ablate` knocked out (zeros) when given
    "repeat_accuracy", "repeat_loss", "first_loss", "repeat_accuracy_drop", "repeat_loss_rise",
    // first_loss_rise: the first copies' loss against the intact model (a head may help the
    // repeats by zeroing it and still cost the unpredictable tokens)
    "first_loss_rise",
    // held-out lengths (evaluate_repeats)
    "length_accuracy", "repeat", "unseen_accuracy",
    // the table's kv_heads (repeat_accuracy ... on the mean-pooled GQA conversion)
    "kv_heads",
    // the table's keep (repeat_accuracy ... on the model pruned to keep heads per layer)
    "keep",
    // baselines on the same batch: a uniform guess over the tokens that can be targets
    // (1/(V-1), ln(V-1); BOS is never one), a uniform pick among the distinct tokens seen so
    // far, and how often the model's own top guess is such a token
    "vocab_targets", "chance_accuracy", "uniform_loss", "seen_accuracy", "seen_guess_share",
    // the run's train_log.jsonl
    "phase_change_step",
    // the log line of the table's step (any logged step, no checkpoint needed): the best
    // previous-token / induction score over the heads of `layer` (every layer when absent)
    "log_previous", "log_induction",
    // experiment streaming: mean loss at the last positions under three KV caches
    "late_loss_full", "late_loss_window", "late_loss_sink",
    // over the runs of one recipe (the table's runs: checkpoint names, one per seed): how many
    // copy (model::run_learned: repeat_accuracy >= 0.5), how many there are, and the spread of repeat_accuracy
    "runs_learned", "runs_count", "runs_min", "runs_median", "runs_max",
    // experiment streaming: accuracy on the predictable second copies under the three caches
    "stream_accuracy_full", "stream_accuracy_window", "stream_accuracy_sink", "stream_sequences",
    // a recall / gist run, on held-out sequences of its recipe's task (model::evaluate_task):
    // recall's answers, gist's first answers (the later ones can be copied from it), and every
    // answer of the task pooled per token (the one average score)
    "recall_accuracy", "gist_accuracy", "answer_accuracy",
    // their baselines: a uniform guess among the value tokens, a coin flip between the halves;
    // recall_present_chance: a uniform guess among the distinct value tokens already in the
    // sequence (the answer is always one of them), on the same held-out sequences
    "recall_chance", "gist_chance", "recall_present_chance"};
  // the whole pass: the stream, W_O's writes, DLA, the logit lens, sampling (whole_quantity.h)
  fields.insert(fields.end(), whole_fields().begin(), whole_fields().end());
  // a model trained on text: the held-out sample, the arcs, ablation on text (text_quantity.h)
  fields.insert(fields.end(), text_fields().begin(), text_fields().end());
  return fields;
}();

namespace {

// One checkpoint folder and what has been computed on it.
struct Loaded {
  model::Model model;
  nlohmann::json meta;
  std::unique_ptr<model::HeadTable> roles;
  std::map<std::string, model::LossStats> losses;  // by ablate text ("" = none)
  std::map<int64_t, double> length_accuracy;
  std::optional<double> unseen;
  std::map<std::string, double> streaming;
  std::map<std::string, std::pair<double, double>> seen;  // by ablate: seen_accuracy, seen_guess_share
  std::optional<model::LossStats> task;                   // evaluate_task on the recipe's task
  std::optional<double> init_entropy;                     // mean_entropy of init_model(config)
  std::optional<double> present_chance;                   // recall_present_chance
};

// Two locks, so that a worker computing a value (seconds of forward passes) never stalls the
// frame that asks which checkpoint a step opens: g_files guards the loaded checkpoints and the
// value cache (held for a lookup or a file read), g_compute the evaluations on them (a
// Loaded's tables fill in as they are asked for). g_compute is taken first when both are held.
std::recursive_mutex g_files;  // recursive: step_dir loads under it, and model_field calls step_dir under it
std::mutex g_compute;
std::map<std::string, std::shared_ptr<Loaded>> g_loaded;  // by folder
std::string g_cache_file;                                 // "" = no disk cache
nlohmann::json g_disk;                                    // its content: key -> value

// The value cache, a model.json and a training log are KBs to a few MB.
constexpr int64_t kMaxValueFileBytes = int64_t{64} << 20;

std::map<std::string, std::string> g_hashes;  // model.json -> content_hash, per cache start

// A file's bytes as FNV-1a 64 in hex ("-" when it cannot be read): what a cached value's
// checkpoint was, without trusting file times (an unpacked copy has new ones). Read once per
// use_model_value_cache (a claim over 12 runs would read 13 files for every value).
std::string content_hash(const fs::path& file) {
  const auto [slot, fresh] = g_hashes.try_emplace(file.string());
  if (!fresh) return slot->second;
  std::string bytes;
  try {
    bytes = read_text_file(file.string(), kMaxValueFileBytes);
  } catch (const Error&) {
    return slot->second = "-";
  }
  uint64_t h = 1469598103934665603ull;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return slot->second = out;
}

// What a value depends on: the checkpoint (its folder under the shipped models, so that a
// value computed from the source tree serves the page's copy of it, and its model.json's
// content), every run a claim over runs reads, the field and the table.
std::string disk_key(const std::string& dir, const ModelSettings& s, const std::string& f) {
  std::error_code ec;
  const fs::path shipped = fs::weakly_canonical(model::shipped_models_dir(), ec);
  const fs::path full = fs::weakly_canonical(dir, ec);
  const fs::path rel = full.lexically_relative(shipped);
  const bool inside = !rel.empty() && *rel.begin() != "..";
  std::string key = "v3|" + (inside ? "shipped/" + rel.generic_string() : full.string()) + "|" +
                    content_hash(fs::path(dir) / "model.json");
  if (s.runs) {
    std::stringstream names(*s.runs);
    for (std::string run; std::getline(names, run, ',');)
      key += "|" + content_hash(shipped / run / "model.json");
  }
  return key + "|" + f + "|" + s.ablate.value_or("") + "|" + (s.layer ? std::to_string(*s.layer) : "") + "." +
         (s.head ? std::to_string(*s.head) : "") + "|" + (s.repeat ? std::to_string(*s.repeat) : "") + "|" +
         s.role.value_or("") + "|" + (s.kv_heads ? std::to_string(*s.kv_heads) : "") + "|" + s.runs.value_or("") + "|" +
         (s.keep ? std::to_string(*s.keep) : "") + "|" + s.of.value_or("") + "|" +
         (s.temperature ? std::to_string(*s.temperature) : "") + "|" + (s.top_k ? std::to_string(*s.top_k) : "") + "|" +
         (s.top_p ? std::to_string(*s.top_p) : "") + "|" + (s.seed ? std::to_string(*s.seed) : "") + "|" +
         (s.prompts ? std::to_string(*s.prompts) : "");
}

std::string checkpoint_name(const ModelSettings& s) {
  const std::string name = s.checkpoint.value_or("induction");
  const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  if (!ok) throw Error("checkpoint '" + name + "' must be a folder name under assets/models/ (letters, digits, '_', '-')");
  return name;
}

std::shared_ptr<Loaded> load(const std::string& dir) {
  std::lock_guard<std::recursive_mutex> lock(g_files);
  if (auto it = g_loaded.find(dir); it != g_loaded.end()) return it->second;
  auto l = std::make_shared<Loaded>();
  l->model = model::load_checkpoint(dir, &l->meta);
  g_loaded.emplace(dir, l);
  return l;
}

// The run folder of the named checkpoint.
std::string run_dir(const ModelSettings& s) {
  const std::string name = checkpoint_name(s);
  const fs::path dir = fs::path(model::shipped_models_dir()) / name;
  std::error_code ec;
  if (!fs::is_regular_file(dir / "model.json", ec)) {
    std::string known;
    for (const auto& e : fs::directory_iterator(model::shipped_models_dir(), ec))
      if (fs::is_regular_file(e.path() / "model.json", ec))
        known += (known.empty() ? "" : ", ") + e.path().filename().string();
    throw Error("no shipped checkpoint '" + name + "' in " + model::shipped_models_dir() + " (known: " + known + ")");
  }
  return dir.string();
}

// The folder of the claim's step: the run itself when `step` is absent or is the final
// model's step, else checkpoints/step-NNNNNN.
std::string step_dir(const ModelSettings& s) {
  const std::string root = run_dir(s);
  if (!s.step) return root;
  if (load(root)->meta.value("step", int64_t{-1}) == *s.step) return root;
  char name[32];
  std::snprintf(name, sizeof name, "step-%06lld", static_cast<long long>(*s.step));
  const fs::path dir = fs::path(root) / "checkpoints" / name;
  std::error_code ec;
  if (!fs::is_regular_file(dir / "model.json", ec)) {
    std::string known;
    for (const auto& e : fs::directory_iterator(fs::path(root) / "checkpoints", ec))
      known += (known.empty() ? "" : ", ") + e.path().filename().string();
    throw Error("checkpoint '" + checkpoint_name(s) + "' has no step " + std::to_string(*s.step) + " (saved: " +
                (known.empty() ? "none" : known) + ", and the final model)");
  }
  return dir.string();
}

const model::HeadTable& roles(Loaded& l) {
  if (!l.roles) l.roles = std::make_unique<model::HeadTable>(model::score_heads(l.model, model::scoring_batch(l.model.config)));
  return *l.roles;
}

const model::HeadScores& one_head(Loaded& l, const ModelSettings& s, const std::string& field) {
  if (!s.layer || !s.head) throw Error("model." + field + " reads one head: give the model table layer and head");
  const model::ModelConfig& c = l.model.config;
  if (*s.layer < 0 || *s.layer >= c.layers || *s.head < 0 || *s.head >= c.heads)
    throw Error("head " + std::to_string(*s.layer) + "." + std::to_string(*s.head) + " is outside the model (" +
                std::to_string(c.layers) + " layers × " + std::to_string(c.heads) + " heads)");
  return roles(l).at(*s.layer, *s.head);
}

// With kv_heads, on the model with its K/V heads mean-pooled to that many (model/gqa.h); with
// keep, on the model pruned to its `keep` most important heads per layer (model::prune_to).
const model::LossStats& losses(Loaded& l, const std::string& ablate, std::optional<int64_t> kv_heads = std::nullopt,
                               std::optional<int64_t> keep = std::nullopt) {
  const std::string key = ablate + (kv_heads ? "|kv=" + std::to_string(*kv_heads) : "") +
                          (keep ? "|keep=" + std::to_string(*keep) : "");
  if (auto it = l.losses.find(key); it != l.losses.end()) return it->second;
  if (keep && (!ablate.empty() || kv_heads)) throw Error("keep prunes the model itself: give it without ablate or kv_heads");
  const model::Batch batch = model::ablation_batch(l.model.config);
  model::Ablation ab;
  if (!ablate.empty()) ab.heads = model::parse_heads(ablate, l.model.config);
  if (keep) ab = model::prune_to(l.model, batch, *keep);
  std::optional<model::Model> pooled;
  if (kv_heads) pooled = model::convert_to_gqa(l.model, *kv_heads);
  const model::LossStats stats = model::cross_entropy(
      model::forward_finite(pooled ? *pooled : l.model, batch, ab.heads.empty() ? nullptr : &ab).logits, batch);
  return l.losses.emplace(key, stats).first->second;
}

// On the ablation batch's predictable targets (part kRepeat): the accuracy of picking uniformly
// among the distinct non-BOS tokens seen up to the position (the target is always one of them),
// and the share of the model's top guesses (with `ablate` knocked out) that are such a token.
const std::pair<double, double>& seen_baseline(Loaded& l, const std::string& ablate) {
  if (auto it = l.seen.find(ablate); it != l.seen.end()) return it->second;
  const model::Batch batch = model::ablation_batch(l.model.config);
  model::Ablation ab;
  if (!ablate.empty()) ab.heads = model::parse_heads(ablate, l.model.config);
  const Tensor logits = model::forward_finite(l.model, batch, ablate.empty() ? nullptr : &ab).logits.contiguous();
  const int64_t T = batch.len, V = logits.size(2);
  const float* z = logits.f32();
  double pick = 0, inside = 0;
  int64_t n = 0;
  std::vector<uint8_t> seen(static_cast<size_t>(V));
  for (int64_t b = 0; b < batch.batch; ++b) {
    std::fill(seen.begin(), seen.end(), 0);
    int64_t distinct = 0;
    for (int64_t t = 0; t < T; ++t) {
      const int32_t tok = batch.tokens[static_cast<size_t>(b * T + t)];
      if (tok != 0 && !seen[static_cast<size_t>(tok)]) seen[static_cast<size_t>(tok)] = 1, ++distinct;
      if (batch.part[static_cast<size_t>(b * T + t)] != model::kRepeat) continue;
      const int32_t target = batch.targets[static_cast<size_t>(b * T + t)];
      if (distinct > 0 && seen[static_cast<size_t>(target)]) pick += 1.0 / static_cast<double>(distinct);
      const float* row = z + (b * T + t) * V;
      const int64_t top = std::max_element(row, row + V) - row;
      inside += seen[static_cast<size_t>(top)] ? 1 : 0;
      ++n;
    }
  }
  if (n == 0) throw Error("the ablation batch has no predictable targets");
  return l.seen.emplace(ablate, std::pair{pick / static_cast<double>(n), inside / static_cast<double>(n)}).first->second;
}

// The first logged step whose best induction score (any head) exceeds 0.5: where the
// induction heads form. Throws when the log has no such line.
double phase_change_step(const std::string& root) {
  const std::string path = (fs::path(root) / "train_log.jsonl").string();
  std::istringstream in(read_text_file(path, kMaxValueFileBytes));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json j = parse_json(line, path);  // nesting bounded (engine/nesting.h)
    if (!j.contains("scores") || !j["scores"].contains("induction")) continue;
    double best = 0;
    for (const auto& row : j["scores"]["induction"])
      for (const auto& v : row)
        if (v.is_number()) best = std::max(best, v.get<double>());
    if (best > 0.5) return j.value("step", 0.0);
  }
  throw Error(path + ": no logged step has an induction score above 0.5");
}

bool is_log_field(const std::string& f) { return f == "log_previous" || f == "log_induction"; }

// log_previous / log_induction: the scores train logged at step `s.step` (a finer record than
// the saved checkpoints: the shipped induction run scores every 25 steps).
double log_score(const std::string& root, const ModelSettings& s, const std::string& f) {
  if (!s.step) throw Error("model." + f + " reads one logged step: give the model table step");
  const std::string path = (fs::path(root) / "train_log.jsonl").string();
  const std::string role = f == "log_previous" ? "previous" : "induction";
  std::istringstream in(read_text_file(path, kMaxValueFileBytes));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json j = parse_json(line, path);  // nesting bounded (engine/nesting.h)
    if (j.value("step", int64_t{-1}) != *s.step || !j.contains("scores") || !j["scores"].contains(role)) continue;
    const auto& layers = j["scores"][role];
    if (s.layer && (*s.layer < 0 || *s.layer >= static_cast<int64_t>(layers.size())))
      throw Error("model." + f + ": the log has no layer " + std::to_string(*s.layer));
    double best = 0;
    for (size_t i = 0; i < layers.size(); ++i)
      if (!s.layer || static_cast<int64_t>(i) == *s.layer)
        for (const auto& v : layers[i])
          if (v.is_number()) best = std::max(best, v.get<double>());
    return best;
  }
  throw Error(path + ": no logged scores at step " + std::to_string(*s.step));
}

double streaming(Loaded& l, const std::string& dir, const std::string& field) {
  if (l.streaming.empty()) {
    model::ExperimentOptions o;
    o.model_dir = dir;
    const model::ExperimentResult r = model::run_experiment("streaming", o);
    // rows: full, window, sink+window (sink 1), ...; each with loss buckets, the last one far
    // past the window
    const char* names[] = {"late_loss_full", "late_loss_window", "late_loss_sink"};
    const char* accuracy[] = {"stream_accuracy_full", "stream_accuracy_window", "stream_accuracy_sink"};
    for (size_t i = 0; i < 3 && i < r.json.size(); ++i) {
      l.streaming[names[i]] = r.json[i]["buckets"].back()["loss"].get<double>();
      l.streaming[accuracy[i]] = r.json[i]["repeat_accuracy"].get<double>();
      l.streaming["stream_sequences"] = r.json[i]["sequences"].get<double>();
    }
  }
  return l.streaming.at(field);
}

// recall_accuracy, gist_accuracy, answer_accuracy (see kModelFields).
double task_field(Loaded& l, const std::string& name, const std::string& f) {
  if (!l.task) {
    std::optional<model::TaskSpec> task = model::recipe_task(l.meta);
    if (!task || !model::uses_pairs(task->tasks))
      throw Error("model." + f + " scores a recall / gist run: checkpoint '" + name + "' was not trained on either");
    task->vocab = l.model.config.vocab;
    task->len = l.model.config.seq_len;
    l.task = model::evaluate_task(l.model, *task);
  }
  const auto& p = l.task->parts;
  const model::PartStats& one = p[f == "recall_accuracy" ? model::kRecall : model::kGistFirst];
  if (f != "answer_accuracy") {
    if (one.count == 0) throw Error("checkpoint '" + name + "' has no " + (f == "recall_accuracy" ? "recall" : "gist") + " answers");
    return one.accuracy();
  }
  int64_t correct = 0, count = 0;
  for (int part : {model::kRecall, model::kGistFirst, model::kGist}) correct += p[part].correct, count += p[part].count;
  return static_cast<double>(correct) / static_cast<double>(count);  // uses_pairs: at least one answer
}

// recall_present_chance: on evaluate_task's held-out sequences, each recall answer guessed
// uniformly among the distinct value tokens (above K) seen up to its position.
double present_chance(Loaded& l, const std::string& name) {
  if (l.present_chance) return *l.present_chance;
  std::optional<model::TaskSpec> task = model::recipe_task(l.meta);
  if (!task || std::find(task->tasks.begin(), task->tasks.end(), model::Task::Recall) == task->tasks.end())
    throw Error("model.recall_present_chance scores a recall run: checkpoint '" + name + "' was not trained on recall");
  task->vocab = l.model.config.vocab;
  task->len = l.model.config.seq_len;
  const model::Batch b = model::make_batch(*task, 256, 0, uint64_t{1} << 40);  // evaluate_task's sequences
  const int32_t K = static_cast<int32_t>(model::key_tokens(task->vocab));
  std::vector<uint8_t> seen(static_cast<size_t>(task->vocab));
  double pick = 0;
  int64_t n = 0;
  for (int64_t s = 0; s < b.batch; ++s) {
    std::fill(seen.begin(), seen.end(), 0);
    int64_t distinct = 0;
    for (int64_t t = 0; t < b.len; ++t) {
      const size_t i = static_cast<size_t>(s * b.len + t);
      const int32_t tok = b.tokens[i];
      if (tok > K && !seen[static_cast<size_t>(tok)]) seen[static_cast<size_t>(tok)] = 1, ++distinct;
      if (b.part[i] != model::kRecall) continue;
      const int32_t target = b.targets[i];
      if (distinct > 0 && seen[static_cast<size_t>(target)]) pick += 1.0 / static_cast<double>(distinct);
      ++n;
    }
  }
  if (n == 0) throw Error("checkpoint '" + name + "' has no recall answers");
  return *(l.present_chance = pick / static_cast<double>(n));
}

// mean row entropy over every head of a head table
double mean_entropy_of(const model::HeadTable& t) {
  double sum = 0;
  for (const auto& h : t.cells) sum += h.entropy;
  return sum / static_cast<double>(t.cells.size());
}

}  // namespace

std::vector<std::string> step_model_dirs(const LessonStep& step) {
  std::lock_guard<std::recursive_mutex> lock(g_files);
  std::vector<std::string> dirs;
  auto add = [&](const ModelSettings& m) {
    if (std::string d = step_dir(m); std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  };
  for (const Claim& c : step.claims) {
    if (c.quantity.rfind("model.", 0) != 0 && c.quantity.rfind("decode.", 0) != 0) continue;
    // A claim over runs is evidence the text cites (lesson check evaluates it over every
    // run), and a log field names a logged step, which need not have a checkpoint; the step
    // opens the checkpoints its other claims name.
    if (!c.model.runs && !is_log_field(c.quantity.substr(c.quantity.find('.') + 1))) add(c.model);
  }
  if (dirs.empty()) dirs.push_back(step_dir(ModelSettings{}));
  return dirs;
}

std::string model_dir_of(const ModelSettings& s) {
  std::lock_guard<std::recursive_mutex> lock(g_files);
  return step_dir(s);
}

const model::Model& loaded_model(const std::string& dir) {
  std::lock_guard<std::recursive_mutex> lock(g_files);
  return load(dir)->model;  // g_loaded keeps it for the process
}

std::string step_model_dir(const LessonStep& step) { return step_model_dirs(step).front(); }

static Value model_field_uncached(const ModelSettings& s, const std::string& f);

void use_model_value_cache(const std::string& file) {
  std::lock_guard<std::recursive_mutex> lock(g_files);
  g_cache_file = file;
  g_disk = nlohmann::json::object();
  g_hashes.clear();
  if (file.empty()) return;
  std::error_code ec;
  if (!fs::exists(file, ec)) return;
  try {  // through the checked opener: a FIFO or /dev/zero there must not stall the app
    g_disk = parse_json(read_text_file(file, kMaxValueFileBytes), file);
    if (!g_disk.is_object()) g_disk = nlohmann::json::object();
  } catch (const std::exception&) {
    g_disk = nlohmann::json::object();  // a broken cache is only a slower start
  }
}

std::string default_model_value_cache() { return (fs::path(user_dir(UserDir::Cache)) / "model-values.json").string(); }

Value model_field(const ModelSettings& s, const std::string& f) {
  // The table's own step: what a log field's step is written as ({value:model.step@ID}); a
  // checkpoint saved at that step has that step, so nothing needs loading.
  if (f == "step" && s.step && !s.runs) return static_cast<double>(*s.step);
  std::string key;
  {
    std::lock_guard<std::recursive_mutex> lock(g_files);
    if (!g_cache_file.empty()) {
      // a log field's step is a log line, not a checkpoint: keyed by the run and the log's bytes
      key = is_log_field(f) ? disk_key(run_dir(s), s, f) + "|" + (s.step ? std::to_string(*s.step) : "") + "|" +
                                  content_hash(fs::path(run_dir(s)) / "train_log.jsonl")
                            : disk_key(step_dir(s), s, f);
      if (auto it = g_disk.find(key); it != g_disk.end()) {
        if (it->is_number()) return it->get<double>();
        if (it->is_string()) return it->get<std::string>();
      }
    }
  }
  const Value v = model_field_uncached(s, f);
  std::lock_guard<std::recursive_mutex> lock(g_files);
  if (!g_cache_file.empty()) {
    if (const double* d = std::get_if<double>(&v)) g_disk[key] = *d;
    else if (const std::string* t = std::get_if<std::string>(&v)) g_disk[key] = *t;
    try {
      std::error_code ec;
      fs::create_directories(fs::path(g_cache_file).parent_path(), ec);
      model::write_text_file(g_cache_file, g_disk.dump());
    } catch (const Error&) {
      // a cache that cannot be written only makes the next start slower
    }
  }
  return v;
}

namespace {

Value field_locked(const ModelSettings& s, const std::string& f);

// runs_*: the field `of` (default repeat_accuracy) on every run of the table's runs, each
// under the table's other settings; runs_learned counts the runs whose repeat accuracy is at
// least model::kRunLearned.
Value over_runs(const ModelSettings& s, const std::string& f) {
  if (!s.runs || s.runs->empty())
    throw Error("model." + f + " reads several runs: give the model table runs = \"name,name,...\"");
  if (s.checkpoint) throw Error("model." + f + ": give runs, not checkpoint");
  const std::string of = f == "runs_learned" ? "repeat_accuracy" : s.of.value_or("repeat_accuracy");
  if (of.rfind("runs_", 0) == 0 || of.rfind("prompts_", 0) == 0 || std::find(kModelFields.begin(), kModelFields.end(), of) == kModelFields.end())
    throw Error("model." + f + ": of = \"" + of + "\" is not a model field a run has");
  std::vector<double> values;
  size_t start = 0;
  for (;;) {
    const size_t comma = s.runs->find(',', start);
    ModelSettings one = s;
    one.runs.reset();
    one.of.reset();
    one.checkpoint = s.runs->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    // A count needs each run to exist, not a forward pass over it (seconds on a language model).
    Value v = 0.0;
    if (f == "runs_count")
      (void)run_dir(one);  // throws for a run that is not shipped
    else
      v = field_locked(one, of);
    const double* d = std::get_if<double>(&v);
    if (!d) throw Error("model." + f + ": of = \"" + of + "\" is not a number");
    values.push_back(*d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(values.begin(), values.end());
  if (f == "runs_count") return static_cast<double>(values.size());
  if (f == "runs_learned")
    return static_cast<double>(std::count_if(values.begin(), values.end(), model::run_learned));
  if (f == "runs_min") return values.front();
  if (f == "runs_max") return values.back();
  if (f != "runs_median") throw Error("unknown model field '" + f + "'");
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

static Value model_field_uncached(const ModelSettings& s, const std::string& f) {
  std::lock_guard<std::mutex> lock(g_compute);
  return field_locked(s, f);
}

namespace {

Value field_locked(const ModelSettings& s, const std::string& f) {
  if (f == "layer" || f == "head" || f == "repeat" || f == "top_k" || f == "seed" || f == "prompts") {  // the table's own figures, for {value:model.layer@ID}
    const auto& v = f == "layer"    ? s.layer
                    : f == "head"   ? s.head
                    : f == "repeat" ? s.repeat
                    : f == "top_k"  ? s.top_k
                    : f == "seed"   ? s.seed
                                    : s.prompts;
    if (!v) throw Error("the model table has no " + f);
    return static_cast<double>(*v);
  }
  if (f == "temperature" || f == "top_p") {
    const auto& v = f == "temperature" ? s.temperature : s.top_p;
    if (!v) throw Error("the model table has no " + f);
    return *v;
  }
  if (f.rfind("runs_", 0) == 0) return over_runs(s, f);
  if (s.runs) throw Error("model." + f + " reads one checkpoint: the table's runs are for runs_* only");
  const bool over_prompts = f.rfind("prompts_", 0) == 0;
  if (s.of && !over_prompts) throw Error("model." + f + ": the table's of names what runs_* and prompts_* read");
  if (s.prompts && !over_prompts) throw Error("model." + f + " reads one sequence: the table's prompts are for prompts_* only");
  // kv_heads changes the model the loss fields run; a field it would silently not change is refused
  static const std::vector<std::string> kReadsKv = {"repeat_accuracy", "repeat_loss", "first_loss", "kv_heads", "keep",
                                                    "step", "d_model", "heads", "layers", "head_dim",
                                                    "vocab_targets", "chance_accuracy", "uniform_loss"};
  if (s.kv_heads && std::find(kReadsKv.begin(), kReadsKv.end(), f) == kReadsKv.end())
    throw Error("model." + f + " does not read kv_heads (repeat_accuracy, repeat_loss, first_loss do)");
  if (s.keep && std::find(kReadsKv.begin(), kReadsKv.end(), f) == kReadsKv.end() && !text_field_reads_keep(f))
    throw Error("model." + f + " does not read keep (repeat_accuracy, repeat_loss, first_loss do)");
  const std::string per = over_prompts ? s.of.value_or("") : f;  // the field each sequence reads
  if (!reads_sampling(per) && (s.temperature || s.top_k || s.top_p || s.seed))
    throw Error("model." + per + " does not sample: temperature, top_k, top_p and seed are for sample_*, loop_* and third_copy_prob");
  if (is_log_field(f)) return log_score(run_dir(s), s, f);
  if (text_field_reads_run_files(f)) return text_field(model::Model{}, "", run_dir(s), s, f);  // no weights needed
  const std::string dir = step_dir(s);
  Loaded& l = *load(dir);
  if (is_whole_field(f)) return whole_field(l.model, s, f);
  if (is_text_field(f)) return text_field(l.model, dir, run_dir(s), s, f);
  const model::ModelConfig& c = l.model.config;
  if (f == "step") return l.meta.value("step", 0.0);
  if (f == "params") return static_cast<double>(model::param_count(c));
  if (f == "d_model") return static_cast<double>(c.d_model);
  if (f == "heads") return static_cast<double>(c.heads);
  if (f == "layers") return static_cast<double>(c.layers);
  if (f == "head_dim") return static_cast<double>(c.head_dim());
  if (f == "kv_groups") return static_cast<double>(c.kv_group_count());
  if (f == "uptrain_steps") return l.meta.contains("gqa") ? l.meta["gqa"].value("uptrain_steps", 0.0) : 0.0;
  if (f == "previous") return one_head(l, s, f).previous;
  if (f == "induction") return one_head(l, s, f).induction;
  if (f == "duplicate") return one_head(l, s, f).duplicate;
  if (f == "first") return one_head(l, s, f).first;
  if (f == "first_contribution") return one_head(l, s, f).first_contribution;
  if (f == "role") return model::role_label(one_head(l, s, f));
  if (f == "best_previous" || f == "best_induction") {
    double best = 0;
    for (const auto& h : roles(l).cells) best = std::max(best, f == "best_previous" ? h.previous : h.induction);
    return best;
  }
  if (f.rfind("gap_", 0) == 0) {
    const model::HeadTable& t = roles(l);
    size_t top = 0;  // the first in layer, head order among equal gaps
    for (size_t i = 1; i < t.cells.size(); ++i)
      if (t.cells[i].first - t.cells[i].first_contribution > t.cells[top].first - t.cells[top].first_contribution) top = i;
    if (f == "gap_layer") return static_cast<double>(static_cast<int64_t>(top) / t.heads);
    if (f == "gap_head") return static_cast<double>(static_cast<int64_t>(top) % t.heads);
    if (f == "gap_first") return t.cells[top].first;
    if (f == "gap_contribution") return t.cells[top].first_contribution;
    if (f == "gap_size") return t.cells[top].first - t.cells[top].first_contribution;
    double up = 0, down = 0, weighted = 0, weight = 0;
    for (const auto& h : t.cells) {
      const double gap = h.first - h.first_contribution;
      up += gap > 0 ? 1 : 0;
      down += gap < 0 ? 1 : 0;
      weighted += h.first * gap;
      weight += h.first;
    }
    if (f == "gap_up") return up;
    if (f == "gap_down") return down;
    if (f == "gap_mean") return weight > 0 ? weighted / weight : 0.0;
  }
  if (f == "head_count") return static_cast<double>(c.layers * c.heads);
  if (f == "mean_entropy") return mean_entropy_of(roles(l));
  if (f == "init_mean_entropy") {
    if (!l.init_entropy) {
      const model::Model init = model::init_model(c);  // the seed in config reproduces step 0
      l.init_entropy = mean_entropy_of(model::score_heads(init, model::scoring_batch(c)));
    }
    return *l.init_entropy;
  }
  if (f == "uniform_entropy") {  // over the rows score_pattern averages (i >= 1)
    const int64_t T = model::scoring_batch(c).len;
    double sum = 0;
    for (int64_t i = 1; i < T; ++i) sum += std::log(static_cast<double>(i + 1));
    return sum / static_cast<double>(T - 1);
  }
  if (f == "role_count") {
    if (!s.role) throw Error("model.role_count counts the heads of one role: give the model table role");
    double n = 0;
    for (const auto& h : roles(l).cells) n += model::role_label(h) == *s.role ? 1 : 0;
    return n;
  }
  const std::string ablate = s.ablate.value_or("");
  if (f == "kv_heads") {
    if (!s.kv_heads) throw Error("the model table has no kv_heads");
    return static_cast<double>(*s.kv_heads);
  }
  if (f == "keep") {
    if (!s.keep) throw Error("the model table has no keep");
    return static_cast<double>(*s.keep);
  }
  if (f == "repeat_accuracy") return losses(l, ablate, s.kv_heads, s.keep).parts[model::kRepeat].accuracy();
  if (f == "repeat_loss") return losses(l, ablate, s.kv_heads, s.keep).parts[model::kRepeat].loss();
  if (f == "first_loss") return losses(l, ablate, s.kv_heads, s.keep).parts[model::kFirst].loss();
  if (f == "repeat_accuracy_drop" || f == "repeat_loss_rise") {
    if (ablate.empty()) throw Error("model." + f + " compares with heads knocked out: give the model table ablate");
    const auto& base = losses(l, "").parts[model::kRepeat];
    const auto& cut = losses(l, ablate).parts[model::kRepeat];
    return f == "repeat_accuracy_drop" ? base.accuracy() - cut.accuracy() : cut.loss() - base.loss();
  }
  if (f == "first_loss_rise") {
    if (ablate.empty()) throw Error("model." + f + " compares with heads knocked out: give the model table ablate");
    return losses(l, ablate).parts[model::kFirst].loss() - losses(l, "").parts[model::kFirst].loss();
  }
  if (f == "length_accuracy") {
    if (!s.repeat) throw Error("model.length_accuracy needs the model table's repeat (a segment length)");
    if (*s.repeat < 1 || 2 * *s.repeat + 1 > c.seq_len || *s.repeat >= c.vocab)
      throw Error("repeat " + std::to_string(*s.repeat) + " does not fit twice in the model's " +
                  std::to_string(c.seq_len) + " positions");
    if (auto it = l.length_accuracy.find(*s.repeat); it != l.length_accuracy.end()) return it->second;
    const double a = model::evaluate_repeats(l.model, {*s.repeat}).front().accuracy;
    l.length_accuracy[*s.repeat] = a;
    return a;
  }
  if (f == "unseen_accuracy") {
    if (!l.unseen) {
      const auto recipe = model::recipe_task(load(run_dir(s))->meta);
      if (!recipe || recipe->holdout_repeats.empty())
        throw Error("checkpoint '" + checkpoint_name(s) + "' held no repeat length out of training");
      l.unseen = model::pooled_accuracy(model::evaluate_repeats(l.model, recipe->holdout_repeats));
    }
    return *l.unseen;
  }
  if (f == "vocab_targets") return static_cast<double>(model::vocab_targets(c));
  if (f == "chance_accuracy") return model::chance_accuracy(c);
  if (f == "uniform_loss") return model::uniform_loss(c);
  if (f == "recall_chance") return model::recall_chance(c);
  if (f == "gist_chance") return model::kGistChance;
  if (f == "recall_present_chance") return present_chance(l, checkpoint_name(s));
  if (f == "seen_accuracy") return seen_baseline(l, ablate).first;
  if (f == "seen_guess_share") return seen_baseline(l, ablate).second;
  if (f == "phase_change_step") return phase_change_step(run_dir(s));
  if (f.rfind("late_loss_", 0) == 0 || f.rfind("stream_", 0) == 0) return streaming(l, dir, f);
  if (f == "recall_accuracy" || f == "gist_accuracy" || f == "answer_accuracy") return task_field(l, checkpoint_name(s), f);
  throw Error("unknown model field '" + f + "'");
}

}  // namespace

}  // namespace attnsim::lessons
