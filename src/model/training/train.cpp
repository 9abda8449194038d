#include "model/training/train.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>

#include "model/formats/checkpoint.h"
#include "model/pass/finite.h"
#include "engine/cost.h"
#include "engine/fits.h"
#include "engine/gemm_fixed.h"
#include "engine/error.h"
#include "engine/mha.h"

namespace attnsim::model {

int64_t predict_train_bytes(const ModelConfig& c, const TrainOptions& o) {
  const int64_t step = predict_training_bytes(c, o.batch, o.task.len > 0 ? o.task.len : c.seq_len);
  const int64_t scoring = o.score_every > 0 ? predict_scoring_bytes(c) : 0;
  return step > std::numeric_limits<int64_t>::max() / 2 - scoring ? std::numeric_limits<int64_t>::max() / 2 : step + scoring;
}

namespace {

// The first non-finite tensor of a step that went wrong (finite.h); the loss itself when
// every tensor is finite.
std::string first_nonfinite(const Activations& acts, const Params& grads) {
  const std::string bad = model::first_nonfinite(acts, &grads);
  return bad.empty() ? "none found (the loss itself overflowed)" : bad;
}

nlohmann::json report_json(const StepReport& r) {
  nlohmann::json j{{"step", r.step}, {"loss", r.loss}, {"lr", r.lr}, {"grad_norm", r.grad_norm},
                   {"seconds", std::round(r.seconds * 1000) / 1000}};
  for (int p = 0; p < kPartCount; ++p)
    if (r.part_loss[static_cast<size_t>(p)] >= 0) j["loss_" + std::string(part_name(p))] = r.part_loss[static_cast<size_t>(p)];
  if (r.scored) j["scores"] = scores_json(r.scores);
  if (r.heldout) {
    const auto four = [](double x) { return std::round(x * 1e4) / 1e4; };
    j["heldout_loss"] = r.heldout->loss;
    j["icl"] = {{"early", four(r.heldout->early)}, {"late", four(r.heldout->late)}, {"score", four(r.heldout->icl)}};
    j["scores_repeated"] = scores_json(r.repeated_scores);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r.params_hash));
    j["params_fnv"] = hex;
  }
  return j;
}

std::string step_dir(const std::string& out, int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%06lld", static_cast<long long>(step));
  return (std::filesystem::path(out) / "checkpoints" / name).string();
}

std::string log_text(const std::vector<nlohmann::json>& log) {
  std::string s;
  for (const auto& j : log) s += j.dump() + "\n";
  return s;
}

}  // namespace

uint64_t params_hash(const Params& params) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const Tensor& t : params.tensors) {
    const auto* p = reinterpret_cast<const unsigned char*>(t.f32());
    for (size_t i = 0; i < static_cast<size_t>(t.numel()) * sizeof(float); ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  }
  return h;
}

nlohmann::json scores_json(const HeadTable& t) {
  nlohmann::json j = nlohmann::json::object();
  auto grid = [&](double HeadScores::*f) {
    nlohmann::json g = nlohmann::json::array();
    for (int64_t l = 0; l < t.layers; ++l) {
      nlohmann::json row = nlohmann::json::array();
      for (int64_t h = 0; h < t.heads; ++h) row.push_back(std::round(t.at(l, h).*f * 1e4) / 1e4);
      g.push_back(row);
    }
    return g;
  };
  j["previous"] = grid(&HeadScores::previous);
  j["induction"] = grid(&HeadScores::induction);
  j["duplicate"] = grid(&HeadScores::duplicate);
  j["first"] = grid(&HeadScores::first);
  j["diagonal"] = grid(&HeadScores::diagonal);
  return j;
}

TrainRun::TrainRun(Model& model, const TrainOptions& o, const TrainHooks& hooks)
    : model_(model), o_(o), hooks_(hooks) {
  validate(o.task);
  if (o.task.vocab != model.config.vocab)
    throw Error("the task's vocabulary (" + std::to_string(o.task.vocab) + ") differs from the model's (" +
                std::to_string(model.config.vocab) + ")");
  if (o.task.len > model.config.seq_len)
    throw Error("task sequences of " + std::to_string(o.task.len) + " tokens do not fit the model's " +
                std::to_string(model.config.seq_len) + " positions");
  if (o.batch <= 0 || o.batch > (1 << 20)) throw Error("batch must be in 1..1048576, got " + std::to_string(o.batch));
  if (o.steps < 0) throw Error("steps must not be negative");
  validate(o.adamw);  // the same ranges the CLI checks at parse time (adamw.h)
  check_fits(predict_train_bytes(model.config, o), o.mem_limit, "training this model",
             "lower --batch, --seq, --vocab or the model size");

  adamw_ = o.adamw;
  if (adamw_.total == 0) adamw_.total = o.steps;
  opt_.emplace(model.params, adamw_);
  const bool text = o.task.tasks == std::vector<Task>{Task::Text};
  if (text && !o.heldout) throw Error("the text task needs its held-out split to score the run");
  if (text && o.heldout->vocab != model.config.vocab) throw Error("the held-out split was tokenized for another vocabulary");
  if (text) {
    // 64 windows (8,192 held-out tokens at T = 128) for the loss; 32 of them for the roles
    heldout_windows_ = text_windows(*o.heldout, o.task.len, 64);
    score_batch_ = text_windows(*o.heldout, o.task.len, 32);
    repeated_batch_ = repeated_text(*o.heldout, std::min<int64_t>(32, (o.task.len - 1) / 2), 32);
  } else {
    score_batch_ = scoring_batch(model.config);
  }
  t0_ = std::chrono::steady_clock::now();
  if (!o.out_dir.empty()) std::filesystem::create_directories(o.out_dir);
}

void TrainRun::save(const std::string& dir, int64_t step) const {
  nlohmann::json tasks = nlohmann::json::array();
  for (Task t : o_.task.tasks) tasks.push_back(task_name(t));
  // the recipe travels with the weights: the bar test evaluates on lengths outside it
  nlohmann::json recipe{{"tasks", tasks}, {"min_repeat", o_.task.min_repeat}, {"max_repeat", o_.task.max_repeat},
                        {"holdout_repeats", o_.task.holdout_repeats},
                        {"batch", o_.batch}, {"steps", o_.steps}, {"lr", adamw_.lr}, {"warmup", adamw_.warmup},
                        {"weight_decay", adamw_.weight_decay}, {"clip", adamw_.clip}, {"data_seed", o_.data_seed}};
  if (uses_pairs(o_.task.tasks)) recipe["pairs"] = o_.task.pairs;  // only where it applies: older recipes stay as they were
  if (o_.task.text_repeat_every > 0) recipe["text_repeat_every"] = o_.task.text_repeat_every;
  if (const TextStream* t = o_.task.text.get()) {
    recipe["text"] = {{"corpus", t->name}, {"sha256", t->sha256}, {"tokens", t->tokens.size()},
                      {"tokenizer_sha256", t->tokenizer_sha256}};
    if (o_.heldout) recipe["text"]["heldout"] = {{"corpus", o_.heldout->name}, {"sha256", o_.heldout->sha256}};
  }
  save_checkpoint(model_, dir, {{"step", step}, {"train", recipe}});
}

bool TrainRun::step() {
  if (finished_) return false;
  if (step_ >= o_.steps || (hooks_.stop && hooks_.stop())) {
    finish();
    return false;
  }
  const FixedOrderProducts fixed;  // this step's bits do not depend on the machine (gemm_fixed.h)
  const int64_t step = step_++;
  const Batch batch = make_batch(o_.task, o_.batch, o_.data_seed, static_cast<uint64_t>(step));
  const Activations acts = forward(model_, batch);
  Tensor dlogits;
  const LossStats ls = cross_entropy(acts.logits, batch, &dlogits);
  Params grads = zeros_like(model_.params);
  backward(model_, batch, acts, dlogits, grads);
  const double loss = ls.all.loss();
  if (!std::isfinite(loss) || !std::isfinite(global_norm(grads)))
    throw Error("training stopped at step " + std::to_string(step) + ": loss is " + std::to_string(loss) +
                "; first non-finite tensor: " + first_nonfinite(acts, grads) + " (no checkpoint written for it)");
  StepReport r;
  r.step = step + 1;
  r.lr = learning_rate(adamw_, step);
  r.grad_norm = opt_->step(model_.params, grads);
  r.loss = loss;
  for (const PartStats& p : ls.parts) r.part_loss.push_back(p.count ? p.loss() : -1.0);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  const bool last = r.step == o_.steps;
  if (o_.score_every > 0 && (r.step % o_.score_every == 0 || last || r.step == 1)) {
    r.scored = true;
    r.scores = score_heads(model_, score_batch_);
    if (o_.heldout) {
      r.heldout = evaluate_text(model_, heldout_windows_);
      r.repeated_scores = score_heads(model_, repeated_batch_);
      r.params_hash = params_hash(model_.params);
    }
  }
  if (r.scored || r.step % std::max<int64_t>(o_.log_every, 1) == 0 || last || r.step == 1) log_.push_back(report_json(r));
  if (hooks_.on_step) hooks_.on_step(r);
  if (!o_.out_dir.empty() && o_.checkpoint_every > 0 && (r.step % o_.checkpoint_every == 0 || last)) {
    save(step_dir(o_.out_dir, r.step), r.step);
    write_text_file((std::filesystem::path(o_.out_dir) / "train_log.jsonl").string(), log_text(log_));
  }
  return true;
}

void TrainRun::finish() {
  if (finished_) return;
  finished_ = true;
  if (o_.out_dir.empty()) return;
  save(o_.out_dir + "/.final", opt_->steps_taken());
  // the final model sits at the top of DIR (model.json + .npy), beside checkpoints/ and the log
  for (const auto& e : std::filesystem::directory_iterator(o_.out_dir + "/.final"))
    std::filesystem::rename(e.path(), std::filesystem::path(o_.out_dir) / e.path().filename());
  std::filesystem::remove(o_.out_dir + "/.final");
  write_text_file((std::filesystem::path(o_.out_dir) / "train_log.jsonl").string(), log_text(log_));
}

std::vector<nlohmann::json> train(Model& model, const TrainOptions& o, const TrainHooks& hooks) {
  TrainRun run(model, o, hooks);
  while (run.step()) {
  }
  return run.log();
}

std::vector<RepeatEval> evaluate_repeats(const Model& model, const std::vector<int64_t>& repeats, int64_t sequences,
                                         uint64_t seed) {
  std::vector<RepeatEval> out;
  for (int64_t L : repeats) {
    TaskSpec s;
    s.vocab = model.config.vocab;
    s.len = model.config.seq_len;  // BOS, r r, r' r', ... every segment of length L
    s.min_repeat = s.max_repeat = L;
    const Batch b = make_batch(s, sequences, seed, static_cast<uint64_t>(L));
    const LossStats ls = cross_entropy(forward_finite(model, b).logits, b);
    out.push_back({L, ls.parts[kRepeat].accuracy(), ls.parts[kRepeat].loss(), ls.parts[kFirst].loss(),
                   ls.parts[kRepeat].count});
  }
  return out;
}

std::optional<TaskSpec> recipe_task(const nlohmann::json& meta) {
  const auto train = meta.find("train");
  if (train == meta.end() || !train->is_object()) return std::nullopt;
  const auto tasks = train->find("tasks");
  if (tasks == train->end() || !tasks->is_array() || tasks->empty()) return std::nullopt;
  TaskSpec s;
  s.tasks.clear();
  for (const auto& name : *tasks) {  // the sequences alternate between the tasks, as in the run
    const std::optional<Task> t = name.is_string() ? find_task(name.get<std::string>()) : std::nullopt;
    if (!t) return std::nullopt;
    s.tasks.push_back(*t);
  }
  const auto whole = [&](const char* key) { return train->contains(key) && train->at(key).is_number_integer(); };
  if (uses_pairs(s.tasks)) {
    if (!whole("pairs")) return std::nullopt;
    s.pairs = train->at("pairs").get<int64_t>();
  }
  if (s.tasks == std::vector<Task>{Task::Text} && whole("text_repeat_every"))
    s.text_repeat_every = train->at("text_repeat_every").get<int64_t>();
  const bool repeats = s.text_repeat_every > 0 || std::find(s.tasks.begin(), s.tasks.end(), Task::Induction) != s.tasks.end();
  if (!repeats) return s;
  if (!whole("min_repeat") || !whole("max_repeat")) return std::nullopt;
  s.min_repeat = train->at("min_repeat").get<int64_t>();
  s.max_repeat = train->at("max_repeat").get<int64_t>();
  if (const auto h = train->find("holdout_repeats"); h != train->end()) {
    if (!h->is_array()) return std::nullopt;
    for (const auto& L : *h) {
      if (!L.is_number_integer()) return std::nullopt;
      s.holdout_repeats.push_back(L.get<int64_t>());
    }
  }
  return s;
}

std::optional<TrainOptions> recipe_options(const nlohmann::json& meta) {
  const std::optional<TaskSpec> task = recipe_task(meta);
  if (!task) return std::nullopt;
  const nlohmann::json& r = meta.at("train");
  auto whole = [&](const char* key, int64_t& out) {
    if (!r.contains(key) || !r.at(key).is_number_integer()) return false;
    out = r.at(key).get<int64_t>();
    return true;
  };
  auto real = [&](const char* key, float& out) {
    if (!r.contains(key) || !r.at(key).is_number()) return false;
    out = r.at(key).get<float>();
    return true;
  };
  TrainOptions o;
  o.task = *task;
  if (!whole("batch", o.batch) || !whole("steps", o.steps) || !whole("warmup", o.adamw.warmup) ||
      !real("lr", o.adamw.lr) || !real("weight_decay", o.adamw.weight_decay) || !real("clip", o.adamw.clip) ||
      !r.contains("data_seed") || !r.at("data_seed").is_number_unsigned())
    return std::nullopt;
  o.data_seed = r.at("data_seed").get<uint64_t>();
  // present but out of range is refused, not returned: uptraining a checkpoint whose recipe
  // says lr -1 ascends the loss with exit 0
  try {
    validate(o.adamw);
    check_range(o.batch, "batch", 1, 1 << 20);
    check_range(o.steps, "steps", 0, 10'000'000);
  } catch (const Error& e) {
    throw Error("the checkpoint's training recipe (model.json \"train\"): " + std::string(e.what()));
  }
  return o;
}

LossStats evaluate_task(const Model& model, const TaskSpec& task, int64_t sequences) {
  const Batch b = make_batch(task, sequences, 0, uint64_t{1} << 40);
  return cross_entropy(forward_finite(model, b).logits, b);
}

double pooled_accuracy(const std::vector<RepeatEval>& evals) {
  double correct = 0, count = 0;
  for (const RepeatEval& e : evals) {
    const double n = static_cast<double>(e.predictable);
    correct += e.accuracy * n;
    count += n;
  }
  return count > 0 ? correct / count : 0.0;
}

}  // namespace attnsim::model
