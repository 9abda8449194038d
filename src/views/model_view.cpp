// The trained model the app shows. See model_view.h.
#include "views/model_view.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "views/i18n.h"
#include "engine/error.h"
#include "engine/read_file.h"
#include "model/experiments/ablate.h"
#include "model/formats/checkpoint.h"
#include "model/formats/checkpoint_text.h"
#include "model/pass/generate.h"
#include "model/training/tasks.h"
#include "model/training/text_task.h"
#include "model/text/tokenizer.h"
#include "model/pass/whole_models.h"

namespace attnsim::app {

namespace fs = std::filesystem;

bool is_model_scenario(const std::string& name) {
  return name == "model" || name == "model-ablate-induction" || name == "start";
}

std::string default_model_dir() {
  if (const char* env = std::getenv("ATTNSIM_MODEL"); env && *env) return env;
  return model::shipped_models_dir() + "/induction";
}

std::string start_model_dir() {
  if (const char* env = std::getenv("ATTNSIM_MODEL"); env && *env) return env;
  return model::shipped_models_dir() + "/wordnet-lm-s1";
}

std::vector<uint8_t> sequence_parts(const std::vector<int32_t>& tokens) {
  std::vector<uint8_t> parts(tokens.size(), model::kOther);
  for (size_t t = 1; t + 1 < tokens.size(); ++t) {
    bool seen = false;
    for (size_t j = 1; j < t && !seen; ++j) seen = tokens[j] == tokens[t];
    parts[t] = seen ? model::kRepeat : model::kFirst;
  }
  return parts;
}

// [SECTION] loading

namespace {
uint64_t next_load_id() {
  static std::atomic<uint64_t> next{0};
  return ++next;
}

// The held-out sample is a few hundred glosses (48 KB); a file past this is not the sample.
constexpr int64_t kMaxHeldoutBytes = int64_t{4} << 20;

}  // namespace

void ModelView::load(const std::string& dir, bool later) {
  nlohmann::json meta;
  model::Model m = model::load_checkpoint(dir, &meta);  // throws: the view keeps what it had
  model::CheckpointText text = model::checkpoint_text(dir, m.config);  // throws likewise
  model_ = std::move(m);
  tokenizer_ = text.tokenizer;
  start_token_ = text.start;
  dir_ = dir;
  step_ = meta.value("step", int64_t{0});
  // A language model is scored and mean-ablated on held-out text (its BOS is EOS, its tokens
  // words); the toy model on the batches its task makes.
  std::optional<model::Batch> repeated;
  read_heldout(&repeated);
  const model::Batch scoring = repeated ? *repeated : model::scoring_batch(model_.config);
  roles_ = model::score_heads(model_, scoring);
  roles_chance_ = chance_scores(scoring);
  means_.clear();
  ablation_.means.clear();
  settled_ = false;
  // Heads of a model with another shape do not exist in this one.
  std::erase_if(ablation_.heads, [&](const model::HeadRef& h) {
    return h.layer >= model_.config.layers || h.head >= model_.config.heads;
  });
  loaded_ = true;
  load_id_ = next_load_id();
  dla_token_ = -1;  // a token of the last model may not exist in this one
  if (!later) settle();
  // A sequence of another model's alphabet means nothing to this one: start afresh.
  const bool fits = !tokens_.empty() && static_cast<int64_t>(tokens_.size()) <= model_.config.seq_len &&
                    tokens_[0] == start_token_ &&
                    std::all_of(tokens_.begin(), tokens_.end(), [&](int32_t t) { return t < model_.config.vocab; });
  if (fits)
    recompute();
  else if (tokenizer_) {
    std::vector<int32_t> first = text_rule().encode(sentences()[0]);
    first.resize(std::min<size_t>(first.size(), static_cast<size_t>(model_.config.seq_len)));  // a short model: a prefix
    set_tokens(std::move(first));
  }
  else
    repeated_random(std::min<int64_t>(16, (model_.config.seq_len - 1) / 2), 7);
}

void ModelView::read_heldout(std::optional<model::Batch>* repeated) {
  heldout_batch_ = {};
  heldout_lines_.clear();
  heldout_ = {};
  if (!tokenizer_) return;
  try {
    const model::TextStream stream = model::tokenize_lines(*tokenizer_, read_text_file(heldout_path_, kMaxHeldoutBytes));
    heldout_batch_ = model::text_windows(stream, model_.config.seq_len, kHeldoutWindows);
    *repeated = model::repeated_text(stream, std::min<int64_t>(32, (model_.config.seq_len - 1) / 2), 16);
    for (size_t i = 0; i < stream.starts.size(); ++i) {
      const int64_t end = i + 1 < stream.starts.size() ? stream.starts[i + 1] : static_cast<int64_t>(stream.tokens.size());
      heldout_lines_.emplace_back(stream.tokens.begin() + stream.starts[i],
                                  stream.tokens.begin() + std::min(end, stream.starts[i] + model_.config.seq_len));
    }
  } catch (const Error& e) {  // the model still opens; the panel says why there is no held-out loss
    heldout_batch_ = {};
    heldout_lines_.clear();
    heldout_.why = e.what();
  }
}

void ModelView::settle() {
  if (settled_ || !loaded_) return;
  settled_ = true;
  means_ = model::head_means(model_, heldout_batch_.batch ? heldout_batch_ : model::ablation_batch(model_.config));
  ablation_.means = means_;
  measure_heldout(true);
  if (!ablation_.heads.empty()) recompute(false);  // knocked out before: now with the means and the loss
}

void ModelView::measure_heldout(bool trained_too) {
  if (!heldout_batch_.batch) return;
  if (trained_too) {
    const model::PartStats all = model::cross_entropy(model::forward(model_, heldout_batch_).logits, heldout_batch_).all;
    heldout_.trained = all.loss();
    heldout_.tokens = all.count;
    heldout_.windows = heldout_batch_.batch;
    heldout_.measured = true;
  }
  heldout_.ablated = ablation_.heads.empty()
                         ? heldout_.trained
                         : model::cross_entropy(model::forward(model_, heldout_batch_, &ablation_).logits, heldout_batch_).all.loss();
}


std::string ModelView::label(int32_t id) const { return text_rule().label(id); }

std::function<std::string(int32_t)> ModelView::labeller() const {
  return [t = text_rule()](int32_t id) { return t.label(id); };  // keeps the tokenizer alive
}

std::string ModelView::role(int64_t layer, int64_t head) const {
  if (layer >= roles_.layers || head >= roles_.heads) return "";
  return model::role_label(roles_.at(layer, head));
}

HeadName ModelView::head_name(int64_t layer, int64_t head) const {
  if (layer >= roles_.layers || head >= roles_.heads) return {};
  return name_head(roles_.at(layer, head), roles_chance_);
}

std::vector<model::HeadRef> ModelView::heads_with_role(const std::string& r) const {
  std::vector<model::HeadRef> out;
  for (int64_t l = 0; l < roles_.layers; ++l)
    for (int64_t h = 0; h < roles_.heads; ++h)
      if (role(l, h) == r) out.push_back({l, h});
  return out;
}

std::vector<std::string> ModelView::timeline() const {
  // Panels ask every frame; the folder is listed at most once a second (a live run adds steps).
  const auto now = std::chrono::steady_clock::now();
  if (timeline_dir_ == dir_ && now - timeline_at_ < std::chrono::seconds(1)) return timeline_;
  timeline_dir_ = dir_;
  timeline_at_ = now;
  timeline_ = list_timeline();
  return timeline_;
}

std::vector<std::string> ModelView::list_timeline() const {
  std::vector<std::string> out;
  if (dir_.empty()) return out;
  // A step folder's run is two levels up; the final model is the run folder itself.
  const fs::path dir(dir_);
  const fs::path run = dir.parent_path().filename() == "checkpoints" ? dir.parent_path().parent_path() : dir;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(run / "checkpoints", ec))  // none: ec set, no entries
    if (e.is_directory() && e.path().filename().string().rfind("step-", 0) == 0)
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());  // step-NNNNNN: zero-padded, so text order is step order
  if (fs::exists(run / "model.json", ec)) out.push_back(run.string());  // not while it trains
  return out;
}

// [SECTION] the sequence

std::string ModelView::text() const {
  return text_rule().decode({tokens_.begin() + (tokens_.empty() ? 0 : 1), tokens_.end()});
}

void ModelView::set_text(const std::string& text) {
  if (!loaded_) throw Error(tr("no model is loaded"));
  set_tokens(text_rule().encode(text));
}

model::CheckpointText ModelView::text_rule() const { return model::CheckpointText{tokenizer_, start_token_, model_.config.vocab}; }

void ModelView::set_tokens(std::vector<int32_t> tokens) {
  if (!loaded_) throw Error(tr("no model is loaded"));
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n < 2) throw Error(tr("the sequence needs at least one token after BOS"));
  if (n > model_.config.seq_len)
    throw Error(trf("the sequence has %lld tokens (BOS included); this model reads at most %lld",
                    static_cast<long long>(n), static_cast<long long>(model_.config.seq_len)));
  for (int32_t t : tokens)
    if (t < 0 || t >= model_.config.vocab)
      throw Error(trf("token %d is outside the vocabulary of %lld", t, static_cast<long long>(model_.config.vocab)));
  tokens_ = std::move(tokens);
  recompute();
}

void ModelView::repeated_random(int64_t repeat, uint64_t seed) {
  if (!loaded_) throw Error(tr("no model is loaded"));
  const model::Batch b = model::repeated_batch(model_.config.vocab, repeat, 1, seed);
  // BOS + r + r, as the head scores are measured: a third copy is outside what the task
  // trains (the shipped model's accuracy drops there). A language model starts with EOS.
  std::vector<int32_t> tokens(b.tokens.begin(), b.tokens.end());
  tokens[0] = start_token_;
  set_tokens(std::move(tokens));
}

void ModelView::task_example(uint64_t seed) {
  if (!loaded_) throw Error(tr("no model is loaded"));
  if (tokenizer_) {
    if (heldout_lines_.empty()) throw Error(heldout_.why.empty() ? tr("no held-out text is loaded") : heldout_.why);
    return set_tokens(heldout_lines_[seed % heldout_lines_.size()]);
  }
  model::TaskSpec spec;
  spec.vocab = model_.config.vocab;
  spec.len = model_.config.seq_len;
  spec.max_repeat = std::min<int64_t>(spec.max_repeat, (spec.len - 1) / 2);
  spec.min_repeat = std::min(spec.min_repeat, spec.max_repeat);
  const model::Batch b = model::make_batch(spec, 1, seed, 0);
  set_tokens(std::vector<int32_t>(b.tokens.begin(), b.tokens.end()));
}

void ModelView::decode(int64_t steps, const model::SamplingOptions& options) {
  if (!loaded_) throw Error(tr("no model is loaded"));
  if (static_cast<int64_t>(tokens_.size()) >= model_.config.seq_len)
    throw Error(trf("the sequence already has %lld tokens, all this model reads", static_cast<long long>(model_.config.seq_len)));
  set_tokens(model::generate(model_, tokens_, steps, options,
                             tokenizer_ ? std::optional<int32_t>(start_token_) : std::nullopt));
}

const std::vector<std::string>& ModelView::sentences() {
  // Characters of the toy model's alphabet (a language model reads them too); a sentence said
  // twice gives induction its chance.
  static const std::vector<std::string> s = {
      "the cat sat on the mat. the cat sat on the mat.",
      "Mary and John went to the shop. Mary and John",
      "attention heads copy what came next last time.",
  };
  return s;
}

// [SECTION] ablation

bool ModelView::is_ablated(model::HeadRef h) const {
  return std::find(ablation_.heads.begin(), ablation_.heads.end(), h) != ablation_.heads.end();
}

void ModelView::toggle(model::HeadRef h) {
  auto it = std::find(ablation_.heads.begin(), ablation_.heads.end(), h);
  if (it != ablation_.heads.end())
    ablation_.heads.erase(it);
  else
    ablation_.heads.push_back(h);
  recompute(false);
}

void ModelView::set_ablated(std::vector<model::HeadRef> heads) {
  ablation_.heads = std::move(heads);
  recompute(false);
}

void ModelView::set_mean_ablation(bool mean) {
  ablation_.mean = mean;
  recompute(false);
}

// [SECTION] compute

ModelRun ModelView::run(const model::Ablation* ablation) const {
  model::Batch batch = model::batch_from_tokens({tokens_});
  batch.part = sequence_parts(tokens_);
  for (size_t t = 0; t < batch.part.size(); ++t)
    if (batch.part[t] == model::kOther) batch.targets[t] = -1;  // BOS and the last position
  const model::Activations acts = model::forward(model_, batch, ablation);
  ModelRun r;
  r.stats = model::cross_entropy(acts.logits, batch);
  for (size_t l = 0; l < acts.layers.size(); ++l) {
    const Trace& attn = acts.layers[l].attn;
    r.traces.push_back(attn);
    r.contributions.push_back(model::contribution_pattern(
        attn.at("alpha").out, model::output_norms(model_, attn, static_cast<int64_t>(l))));
  }
  r.patterns = model::score_heads(model_, acts, batch);
  r.chance = chance_scores(batch);
  // Top-5 of the softmax at every position: logits (1, T, V).
  const int64_t T = batch.len, V = model_.config.vocab;
  const std::vector<float> logit_values = acts.logits.to_vector();
  const float* logits = logit_values.data();
  r.predictions.resize(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    const float* row = logits + t * V;
    const float mx = *std::max_element(row, row + V);
    double sum = 0;
    for (int64_t v = 0; v < V; ++v) sum += std::exp(static_cast<double>(row[v] - mx));
    std::vector<int32_t> order(static_cast<size_t>(V));
    for (int64_t v = 0; v < V; ++v) order[static_cast<size_t>(v)] = static_cast<int32_t>(v);
    const int k_top = static_cast<int>(std::min<int64_t>(kTopTokens, V));
    std::partial_sort(order.begin(), order.begin() + k_top, order.end(),
                      [&](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    Prediction& p = r.predictions[static_cast<size_t>(t)];
    p.target = batch.targets[static_cast<size_t>(t)];
    p.part = batch.part[static_cast<size_t>(t)];
    for (int k = 0; k < k_top; ++k) {
      p.top[static_cast<size_t>(k)] = order[static_cast<size_t>(k)];
      p.prob[static_cast<size_t>(k)] =
          static_cast<float>(std::exp(static_cast<double>(row[order[static_cast<size_t>(k)]] - mx)) / sum);
    }
  }
  return r;
}

void ModelView::set_show_contribution(bool on) {
  if (on == show_contribution_) return;
  show_contribution_ = on;
  ++revision_;
}

void ModelView::set_dla_token(int32_t token) {
  if (token >= model_.config.vocab || token < -1)
    throw Error(trf("token %d is outside the vocabulary (0..%lld)", token, static_cast<long long>(model_.config.vocab - 1)));
  dla_token_ = token;
  recompute_whole();
  ++revision_;
}

void ModelView::recompute_whole() {
  whole_ = whole_run(model::pass_model(model_), tokens_, dla_token_);  // the PassModel reads model_: made per use
  sampling_.set_logits(whole_.last_logits);
}

void ModelView::recompute(bool sequence_changed) {
  if (!loaded_ || tokens_.empty()) return;
  if (!settled_ && (ablation_.mean || !sequence_changed)) settle();  // the means, the loss to compare
  const auto t0 = std::chrono::steady_clock::now();
  if (sequence_changed || base_.predictions.size() != tokens_.size()) {
    base_ = run(nullptr);
    recompute_whole();
  }
  if (!ablation_.heads.empty()) ablated_ = run(&ablation_);
  if (!sequence_changed) measure_heldout(false);  // the held-out loss with the heads knocked out now
  compute_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ++revision_;
}

std::shared_ptr<RunData> ModelView::run_data(int64_t layer) const {
  const ModelRun& r = shown();
  if (layer < 0 || layer >= static_cast<int64_t>(r.traces.size())) return nullptr;
  auto d = std::make_shared<RunData>();
  const int64_t T = static_cast<int64_t>(tokens_.size());
  d->config = model::attention_config(model_.config, 1, T);
  d->run.trace = r.traces[static_cast<size_t>(layer)];
  std::vector<std::string> labels;
  for (int32_t t : tokens_) labels.push_back(label(t));
  d->q_tokens = {labels};
  d->k_tokens = {labels};
  d->compute_ms = compute_ms_;
  return d;
}

}  // namespace attnsim::app
