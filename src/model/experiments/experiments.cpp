#include "model/experiments/experiments.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "model/experiments/ablate.h"
#include "model/formats/checkpoint.h"
#include "model/experiments/decode.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "model/training/heads.h"
#include "model/training/memory.h"
#include "model/training/tasks.h"

namespace attnsim::model {

const std::vector<std::string> kExperimentNames = {"roles", "ablation", "prune", "dk-sweep", "one-vs-many", "sink",
                                                 "streaming"};

// The conclusions' sentence patterns (Conclusion): one per verdict.
namespace conclusions {
const char* const kRolesAppeared =
    "%s of %s heads took a role during training that they did not have at initialisation; the loss only asked "
    "for the next token";
const char* const kAblationCounts =
    "%s of %s heads are nearly free to remove, critical: %s (zero ablation, one at a time; base repeat "
    "accuracy %s%%)";
const char* const kPruneWins =
    "pruning a trained 8-head model beat training the few heads from scratch in %s of %s sizes (repeat loss, same "
    "d_model and steps)";
const char* const kDkFlatter =
    "mean row entropy goes from %s nats at d_k=%s to %s at d_k=%s: smaller heads spread their weights more";
const char* const kDkNotFlatter =
    "mean row entropy goes from %s nats at d_k=%s to %s at d_k=%s: smaller heads are not flatter here";
const char* const kManyBeatOne = "8 heads beat 1 head at the same parameter count (repeat loss %s vs %s)";
const char* const kOneMatchedMany =
    "1 head matched or beat 8 heads at the same parameter count (repeat loss %s vs %s)";
const char* const kSinkCount = "%s of %s heads put at least half their weight on BOS";
const char* const kStreamingTail =
    "at positions %s-%s the loss is %s nats with the full cache, %s once BOS is evicted (%s) and %s when it is "
    "kept (%s); repeat accuracy %s%% / %s%% / %s%%";
const char* const kRolesOnRepeats =
    "%s of %s heads take a role on repeated random tokens: %s induction, %s previous-token, %s first-token";
}  // namespace conclusions
using namespace conclusions;

const std::vector<std::string>& conclusion_formats() {
  static const std::vector<std::string> all = {kRolesAppeared, kAblationCounts, kPruneWins,  kDkFlatter, kDkNotFlatter,
                                               kManyBeatOne,   kOneMatchedMany, kSinkCount, kStreamingTail,
                                               kRolesOnRepeats};
  return all;
}

std::string fill_format(const std::string& format, const std::vector<std::string>& values) {
  std::string out;
  size_t used = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    const char next = i + 1 < format.size() ? format[i + 1] : '\0';
    if (next == '%') {
      out += '%';
    } else if (next == 's' && used < values.size()) {
      out += values[used++];
    } else {
      throw Error("conclusion pattern '" + format + "': " +
                  (next == 's' ? "more %s than its " + std::to_string(values.size()) + " values"
                               : std::string("only %s and %% are allowed")));
    }
    ++i;
  }
  if (used != values.size())
    throw Error("conclusion pattern '" + format + "': " + std::to_string(values.size()) + " values for " +
                std::to_string(used) + " %s");
  return out;
}

std::string Conclusion::text() const { return fill_format(format, values); }

namespace {

std::string fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

// Trains a fresh model of `config` with the options' recipe; progress says which one.
Model trained(const ModelConfig& config, const ExperimentOptions& o, const std::string& what) {
  if (o.progress) o.progress("training " + what);
  Model m = init_model(config);
  TrainOptions t = o.train;
  t.out_dir.clear();
  t.score_every = 0;
  t.task.vocab = config.vocab;
  t.task.len = config.seq_len;
  train(m, t);
  return m;
}

// The experiment's subject: the given checkpoint, or one trained now.
Model subject(const ExperimentOptions& o) {
  return o.model_dir.empty() ? trained(o.base, o, "the base model") : load_checkpoint(o.model_dir);
}

double mean_entropy(const HeadTable& t) {
  double s = 0;
  for (const HeadScores& c : t.cells) s += c.entropy;
  return t.cells.empty() ? 0 : s / static_cast<double>(t.cells.size());
}

struct Quality {
  double loss_repeat, accuracy, loss;
};
Quality quality(const Model& m, const Ablation* ab = nullptr) {
  const Batch b = ablation_batch(m.config);
  const LossStats s = cross_entropy(forward_finite(m, b, ab).logits, b);
  return {s.parts[kRepeat].loss(), s.parts[kRepeat].accuracy(), s.all.loss()};
}

}  // namespace

// [SECTION] pieces the Hugging Face experiments share (experiments.h)

void add_ablation_row(ExperimentResult& r, HeadRef head, double delta_loss, double delta_points, int& free_heads,
                      int& critical) {
  const bool is_free = delta_loss < kFreeLoss && -delta_points < kFreePoints, is_critical = -delta_points > kCriticalPoints;
  free_heads += is_free;
  critical += is_critical;
  const char* verdict = is_critical ? "critical" : is_free ? "nearly free" : "matters";
  char line[120];
  std::snprintf(line, sizeof line, "%lld.%lld   %+12.4f  %+12.1f  %s\n", static_cast<long long>(head.layer),
                static_cast<long long>(head.head), delta_loss, delta_points, verdict);
  r.table += line;
  r.json.push_back({{"layer", head.layer}, {"head", head.head}, {"delta_loss_repeat", delta_loss},
                    {"delta_accuracy_points", delta_points}, {"verdict", verdict}});
}

ExperimentResult sink_result(const HeadTable& t) {
  ExperimentResult r{"sink", "head   first-token share   role\n", {}, nlohmann::json::array()};
  int sinks = 0;
  for (int64_t l = 0; l < t.layers; ++l)
    for (int64_t h = 0; h < t.heads; ++h) {
      const HeadScores& s = t.at(l, h);
      sinks += s.first >= kFirstThreshold;
      char line[120];
      std::snprintf(line, sizeof line, "%lld.%lld   %17.3f   %s\n", static_cast<long long>(l), static_cast<long long>(h),
                    s.first, role_label(s).c_str());
      r.table += line;
      r.json.push_back({{"layer", l}, {"head", h}, {"first", s.first}, {"role", role_label(s)}});
    }
  r.conclusion = {kSinkCount, {std::to_string(sinks), std::to_string(t.cells.size())}};
  return r;
}

namespace {

// [SECTION] (a) roles

ExperimentResult roles(const ExperimentOptions& o) {
  const Model after = subject(o);
  const Model before = init_model(after.config);  // the same seed reproduces the initial weights
  const Batch b = scoring_batch(after.config);
  const HeadTable t0 = score_heads(before, b), t1 = score_heads(after, b);
  ExperimentResult r{"roles", "", {}, nlohmann::json::array()};
  r.table = "head   role before -> after             prev         induction    first\n";
  int appeared = 0;
  for (int64_t l = 0; l < t1.layers; ++l)
    for (int64_t h = 0; h < t1.heads; ++h) {
      const HeadScores &a = t0.at(l, h), &z = t1.at(l, h);
      const std::string r0 = role_label(a), r1 = role_label(z);
      appeared += r1 != "mixed" && r1 != r0;
      char line[200];
      std::snprintf(line, sizeof line, "%lld.%lld   %-14s -> %-16s %.2f->%.2f    %.2f->%.2f    %.2f->%.2f\n",
                    static_cast<long long>(l), static_cast<long long>(h), r0.c_str(), r1.c_str(), a.previous,
                    z.previous, a.induction, z.induction, a.first, z.first);
      r.table += line;
      r.json.push_back({{"layer", l}, {"head", h}, {"role_before", r0}, {"role_after", r1},
                        {"previous", {a.previous, z.previous}}, {"induction", {a.induction, z.induction}},
                        {"first", {a.first, z.first}}, {"diagonal", {a.diagonal, z.diagonal}}});
    }
  r.conclusion = {kRolesAppeared, {std::to_string(appeared), std::to_string(t1.cells.size())}};
  return r;
}

// [SECTION] (b) ablation

ExperimentResult ablation(const ExperimentOptions& o) {
  const Model m = subject(o);
  const Batch b = ablation_batch(m.config);
  const LossStats base = cross_entropy(forward_finite(m, b).logits, b);
  ExperimentResult r{"ablation", "head   Δloss(repeat)  Δacc(points)  verdict\n", {}, nlohmann::json::array()};
  int free_heads = 0, critical = 0;
  for (const AblationRow& row : ablate_each_head(m, b, false)) {
    const double dl = row.stats.parts[kRepeat].loss() - base.parts[kRepeat].loss();
    const double dp = 100 * (row.stats.parts[kRepeat].accuracy() - base.parts[kRepeat].accuracy());
    add_ablation_row(r, row.head, dl, dp, free_heads, critical);
  }
  const int64_t n = m.config.layers * m.config.heads;
  r.conclusion = {kAblationCounts, {std::to_string(free_heads), std::to_string(n), std::to_string(critical),
                                    fmt("%.1f", 100 * base.parts[kRepeat].accuracy())}};
  return r;
}

// [SECTION] (c) prune-after vs train-few

ExperimentResult prune(const ExperimentOptions& o) {
  ModelConfig big = o.base;
  big.heads = 8;
  if (big.d_model % 8) throw Error("the prune experiment needs d_model divisible by 8");
  const Model m = trained(big, o, "8 heads (to prune)");
  ExperimentResult r{"prune", "heads/layer  prune-after: loss  acc     train-few: loss  acc\n", {}, nlohmann::json::array()};
  int prune_wins = 0, rows = 0;
  for (int64_t k : {1, 2, 4}) {
    const Ablation ab = prune_to(m, ablation_batch(m.config), k);
    const Quality pruned = quality(m, &ab);
    ModelConfig few = o.base;
    few.heads = k;
    const Quality fresh = quality(trained(few, o, std::to_string(k) + " heads from scratch"));
    char line[160];
    std::snprintf(line, sizeof line, "%-12lld %17.4f  %5.1f%%  %15.4f  %5.1f%%\n", static_cast<long long>(k),
                  pruned.loss_repeat, 100 * pruned.accuracy, fresh.loss_repeat, 100 * fresh.accuracy);
    r.table += line;
    r.json.push_back({{"heads", k}, {"prune_after", {{"loss_repeat", pruned.loss_repeat}, {"accuracy", pruned.accuracy}}},
                      {"train_few", {{"loss_repeat", fresh.loss_repeat}, {"accuracy", fresh.accuracy}}}});
    prune_wins += pruned.loss_repeat < fresh.loss_repeat;
    ++rows;
  }
  r.conclusion = {kPruneWins, {std::to_string(prune_wins), std::to_string(rows)}};
  return r;
}

// [SECTION] (d) d_k sweep

ExperimentResult dk_sweep(const ExperimentOptions& o) {
  ExperimentResult r{"dk-sweep", "h    d_k   mean row entropy (nats)   final loss   repeat acc\n", {}, nlohmann::json::array()};
  double first_entropy = 0, last_entropy = 0;
  std::vector<int64_t> hs;
  for (int64_t h = 1; h <= o.base.d_model / 4; h *= 2)
    if (o.base.d_model % h == 0) hs.push_back(h);
  for (size_t i = 0; i < hs.size(); ++i) {
    ModelConfig c = o.base;
    c.heads = hs[i];
    const Model m = trained(c, o, "h=" + std::to_string(hs[i]) + " (" + std::to_string(i + 1) + "/" + std::to_string(hs.size()) + ")");
    const double ent = mean_entropy(score_heads(m, scoring_batch(c)));
    const Quality q = quality(m);
    char line[160];
    std::snprintf(line, sizeof line, "%-4lld %-5lld %23.3f   %10.4f   %9.1f%%\n", static_cast<long long>(hs[i]),
                  static_cast<long long>(c.head_dim()), ent, q.loss, 100 * q.accuracy);
    r.table += line;
    r.json.push_back({{"heads", hs[i]}, {"head_dim", c.head_dim()}, {"entropy", ent}, {"loss", q.loss}, {"accuracy", q.accuracy}});
    (i == 0 ? first_entropy : last_entropy) = ent;
  }
  r.conclusion = {last_entropy > first_entropy ? kDkFlatter : kDkNotFlatter,
                  {fmt("%.2f", first_entropy), std::to_string(o.base.d_model / hs.front()), fmt("%.2f", last_entropy),
                   std::to_string(o.base.d_model / hs.back())}};
  return r;
}

// [SECTION] (e) one head vs many

ExperimentResult one_vs_many(const ExperimentOptions& o) {
  ExperimentResult r{"one-vs-many", "h    params   final loss   repeat loss   repeat acc\n", {}, nlohmann::json::array()};
  Quality q[2];
  const int64_t hs[2] = {1, 8};
  for (int i = 0; i < 2; ++i) {
    ModelConfig c = o.base;
    c.heads = hs[i];
    q[i] = quality(trained(c, o, "h=" + std::to_string(hs[i])));
    char line[160];
    std::snprintf(line, sizeof line, "%-4lld %6lld   %10.4f   %11.4f   %9.1f%%\n", static_cast<long long>(hs[i]),
                  static_cast<long long>(param_count(c)), q[i].loss, q[i].loss_repeat, 100 * q[i].accuracy);
    r.table += line;
    r.json.push_back({{"heads", hs[i]}, {"params", param_count(c)}, {"loss", q[i].loss}, {"loss_repeat", q[i].loss_repeat},
                      {"accuracy", q[i].accuracy}});
  }
  r.conclusion = {q[1].loss_repeat < q[0].loss_repeat ? kManyBeatOne : kOneMatchedMany,
                  {fmt("%.3f", q[1].loss_repeat), fmt("%.3f", q[0].loss_repeat)}};
  return r;
}

// [SECTION] (f) sink

ExperimentResult sink(const ExperimentOptions& o) {
  const Model m = subject(o);
  return sink_result(score_heads(m, scoring_batch(m.config)));
}

// [SECTION] streaming: StreamingLLM's cache policies on the trained model (issue 11)

// Teacher-forced decode of full-length induction sequences whose repeats are short (2..7
// tokens, so every earlier occurrence stays inside a window of 16): a cache that drops
// old keys loses nothing the task needs, and what changes is only whether BOS is kept.
ExperimentResult streaming(const ExperimentOptions& o) {
  const Model m = subject(o);
  const int64_t T = m.config.seq_len, W = std::max<int64_t>(2, std::min<int64_t>(16, T / 3));
  TaskSpec spec;
  spec.vocab = m.config.vocab;
  spec.len = T;
  spec.max_repeat = std::max<int64_t>(1, std::min<int64_t>({7, W / 2, (T - 1) / 2, m.config.vocab - 1}));
  spec.min_repeat = std::min<int64_t>(2, spec.max_repeat);
  const Batch batch = make_batch(spec, 64, 4242, 0);
  std::vector<CachePolicy> policies(4);
  policies[1] = {PolicyKind::Window, 0, W};
  policies[2] = {PolicyKind::SinkWindow, 1, W - 1};
  policies[3] = {PolicyKind::SinkWindow, std::min<int64_t>(4, W - 1), W - std::min<int64_t>(4, W - 1)};
  ExperimentResult r{"streaming", "", {}, nlohmann::json::array()};
  // loss by position in buckets of W: the first bucket is the same under every policy
  std::vector<std::pair<int64_t, int64_t>> buckets;
  for (int64_t a = 0; a < T - 1; a += W) buckets.emplace_back(a, std::min<int64_t>(a + W, T - 1));
  char line[200];
  std::snprintf(line, sizeof line, "%-18s %8s %8s", "cache", "repeat", "acc");
  r.table += line;
  for (const auto& [a, b] : buckets) {
    std::snprintf(line, sizeof line, "  pos %2lld-%-2lld", static_cast<long long>(a), static_cast<long long>(b - 1));
    r.table += line;
  }
  r.table += "\n";
  std::vector<PositionLoss> runs;
  for (const CachePolicy& p : policies) {
    runs.push_back(loss_by_position(m, batch, p));
    const PositionLoss& pl = runs.back();
    std::snprintf(line, sizeof line, "%-18s %8.3f %7.1f%%", pl.policy.c_str(), pl.repeat_loss, 100 * pl.repeat_accuracy);
    r.table += line;
    nlohmann::json by_bucket = nlohmann::json::array();
    for (const auto& [a, b] : buckets) {
      double mean = 0;
      for (int64_t t = a; t < b; ++t) mean += pl.loss[t] / static_cast<double>(b - a);
      std::snprintf(line, sizeof line, "  %10.3f", mean);
      r.table += line;
      by_bucket.push_back({{"from", a}, {"to", b - 1}, {"loss", mean}});
    }
    r.table += "\n";
    r.json.push_back({{"policy", pl.policy}, {"repeat_loss", pl.repeat_loss}, {"repeat_accuracy", pl.repeat_accuracy},
                      {"mean_loss", pl.mean_loss}, {"loss_by_position", pl.loss}, {"buckets", by_bucket},
                      {"sequences", batch.batch}});
  }
  r.table += "loss in nats; repeat = the predictable second copies (repeats of 2.." + std::to_string(spec.max_repeat) +
             " tokens, inside every window)\n";
  const auto last = buckets.back();
  auto tail = [&](const PositionLoss& pl) {  // mean loss in the last bucket, far past the window
    double mean = 0;
    for (int64_t t = last.first; t < last.second; ++t) mean += pl.loss[t] / static_cast<double>(last.second - last.first);
    return mean;
  };
  r.conclusion = {kStreamingTail,
                  {std::to_string(last.first), std::to_string(last.second - 1), fmt("%.2f", tail(runs[0])),
                   fmt("%.2f", tail(runs[1])), runs[1].policy, fmt("%.2f", tail(runs[2])), runs[2].policy,
                   fmt("%.1f", 100 * runs[0].repeat_accuracy), fmt("%.1f", 100 * runs[1].repeat_accuracy),
                   fmt("%.1f", 100 * runs[2].repeat_accuracy)}};
  return r;
}

}  // namespace

bool uses_model_dir(const std::string& name) {
  return name == "roles" || name == "ablation" || name == "sink" || name == "streaming";
}

void check_experiment(const std::string& name, const ExperimentOptions& o, int64_t mem_limit) {
  if (std::find(kExperimentNames.begin(), kExperimentNames.end(), name) == kExperimentNames.end())
    (void)run_experiment(name, o);  // the unknown-name error, with the valid names
  if (!o.model_dir.empty() && !uses_model_dir(name))
    throw Error("experiment " + name + " trains its own models and cannot use --model (roles, ablation, sink and "
                "streaming can)");
  std::vector<ModelConfig> configs;  // every model the experiment makes
  if (!o.model_dir.empty()) {
    configs.push_back(read_checkpoint_header(o.model_dir).config);
  } else {
    validate(o.base);
    auto with_heads = [&](int64_t h) {
      ModelConfig c = o.base;
      c.heads = h;
      validate(c);
      configs.push_back(c);
    };
    if (name == "prune") {
      if (o.base.d_model % 8) throw Error("the prune experiment needs d_model divisible by 8");
      for (int64_t h : {8, 1, 2, 4}) with_heads(h);
    } else if (name == "dk-sweep") {
      for (int64_t h = 1; h <= o.base.d_model / 4; h *= 2)
        if (o.base.d_model % h == 0) with_heads(h);
      if (configs.empty()) throw Error("the dk-sweep experiment needs d_model of at least 4");
    } else if (name == "one-vs-many") {
      with_heads(1);
      with_heads(8);
    } else {
      configs.push_back(o.base);
    }
  }
  int64_t step = 0, params = 0, eval = 0;
  for (const ModelConfig& c : configs) {
    if (o.model_dir.empty()) {
      TrainOptions t = o.train;
      t.task.vocab = c.vocab;
      t.task.len = c.seq_len;
      t.score_every = 0;
      validate(t.task);
      validate(t.adamw);
      step = std::max(step, predict_train_bytes(c, t));
    }
    params = std::max(params, checkpoint_bytes(c));
    eval = std::max(eval, predict_ablation_bytes(c));
  }
  const int64_t cap = std::numeric_limits<int64_t>::max() / 4;  // each term saturates below this
  check_fits(std::min(cap, step) + std::min(cap, params) + std::min(cap, eval), mem_limit,
             "experiment " + name, "lower --d-model, --layers or --batch");
}

ExperimentResult run_experiment(const std::string& name, const ExperimentOptions& o) {
  if (name == "roles") return roles(o);
  if (name == "ablation") return ablation(o);
  if (name == "prune") return prune(o);
  if (name == "dk-sweep") return dk_sweep(o);
  if (name == "one-vs-many") return one_vs_many(o);
  if (name == "sink") return sink(o);
  if (name == "streaming") return streaming(o);
  std::string valid;
  for (const std::string& n : kExperimentNames) valid += (valid.empty() ? "" : ", ") + n;
  throw Error("unknown experiment '" + name + "' (valid: " + valid + ")");
}

}  // namespace attnsim::model
