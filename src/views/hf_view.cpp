// A Hugging Face folder as the app shows it. See hf_view.h.
//   [SECTION] compute   one run (pure: the model and the settings in, HfRun out), one decode
//   [SECTION] loading   the folder, the prediction, the default input
//   [SECTION] settings  text, tokens, layer, ablation: checked, then a recompute
//   [SECTION] tasks     request / poll / wait over tasks.h
#include "views/hf_view.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "engine/checked.h"
#include "engine/error.h"
#include "engine/fits.h"
#include "model/pass/hf_forward.h"
#include "model/training/memory.h"
#include "model/pass/whole_models.h"
#include "views/head_names.h"
#include "views/i18n.h"

namespace attnsim::app {

namespace hf = model::hf;

namespace {

constexpr int64_t kTopK = 5;
// Role scores on repeated random sequences: the CLI's `heads` (cmd_hf.cpp) uses the same,
// so the grid and `attnsim-cli heads --model DIR` agree.
constexpr int64_t kRepeatLen = 24, kRepeatSequences = 4;
constexpr uint64_t kRepeatSeed = 1;
// The default sentence: a name said twice, where induction and previous-token heads show.
constexpr const char* kDefaultText = "When Mary and John went to the store, John gave a drink to";

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Bytes one recompute holds beside the weights at its peak: the plain and the ablated pass alive
// together, or the whole pass (every step kept) before them.
int64_t passes_bytes(const hf::HfConfig& c, int64_t T) {
  const int64_t two = checked_mul(hf::predict_hf_forward_bytes(c, std::max<int64_t>(T, 1 + 2 * kRepeatLen), false), 2, "memory");
  const int64_t whole = model::predict_whole_bytes({c.layers, c.d_model, c.d_ff, c.vocab}, hf::hf_attention_config(c, std::max<int64_t>(T, 1)));
  return std::max(two, whole);
}

// [SECTION] compute

struct RunRequest {
  std::shared_ptr<const hf::HfModel> model;
  std::vector<int32_t> tokens;
  int64_t layer = 0;
  std::vector<model::HeadRef> ablated;
  std::shared_ptr<const model::HeadTable> repeated;  // null: score them now
  int32_t dla_token = -1;
};

std::shared_ptr<const HfRun> compute_run(const RunRequest& q) {
  const auto t0 = std::chrono::steady_clock::now();
  const hf::HfModel& m = *q.model;
  const int64_t T = static_cast<int64_t>(q.tokens.size());
  auto r = std::make_shared<HfRun>();
  r->tokens = q.tokens;
  r->layer = q.layer;
  r->ablated = q.ablated;
  r->repeated = q.repeated ? q.repeated
                           : std::make_shared<const model::HeadTable>(
                                 hf::score_hf_heads_repeated(m, kRepeatLen, kRepeatSequences, kRepeatSeed));
  // The whole pass first: its steps are gone before the two passes below are made.
  r->whole = std::make_shared<const WholeRun>(whole_run(model::pass_model(m), q.tokens, q.dla_token));
  // The plain pass keeps the layer's trace only when it is the one on screen.
  hf::HfForwardOptions plain;
  plain.keep_layer = q.ablated.empty() ? q.layer : m.config.layers;
  hf::HfForward base = hf::hf_forward(m, q.tokens, plain);
  r->own = hf::score_hf_heads({base}, {q.tokens}, m.config.heads);
  r->own_chance = chance_scores(q.tokens.data(), 1, T);
  // The sequences score_hf_heads_repeated ran: the same seeds, so the same tokens.
  std::vector<std::vector<int32_t>> repeated;
  for (int64_t s = 0; s < kRepeatSequences; ++s)
    repeated.push_back(hf::repeated_random_tokens(m.config, kRepeatLen, kRepeatSeed + static_cast<uint64_t>(s)));
  r->repeated_chance = chance_scores(repeated);
  r->top = hf::top_k(base.logits, T - 1, kTopK);
  if (T >= 2) r->loss = hf::next_token_loss(base.logits, q.tokens);
  if (q.ablated.empty()) {
    r->trace = std::move(base.traces[static_cast<size_t>(q.layer)]);
  } else {
    hf::HfForwardOptions out;
    out.keep_layer = q.layer;
    out.patches = hf::head_patches(m.config, q.ablated);
    hf::HfForward ablated = hf::hf_forward(m, q.tokens, out);
    r->top_ablated = hf::top_k(ablated.logits, T - 1, kTopK);
    if (T >= 2) r->loss_ablated = hf::next_token_loss(ablated.logits, q.tokens);
    r->trace = std::move(ablated.traces[static_cast<size_t>(q.layer)]);
  }
  r->compute_ms = ms_since(t0);
  return r;
}

// Prefill the prompt through every layer's cache, then one token at a time (cmd_decode_hf.cpp
// does the same with a step table).
std::shared_ptr<const HfDecoded> compute_decode(std::shared_ptr<const hf::HfModel> model,
                                                std::shared_ptr<const hf::HfText> text,
                                                std::vector<int32_t> prompt, int64_t steps, double temperature,
                                                uint64_t seed) {
  const auto t0 = std::chrono::steady_clock::now();
  auto d = std::make_shared<HfDecoded>();
  d->prompt = prompt;
  d->temperature = temperature;
  d->seed = seed;
  hf::HfDecoder dec(*model, static_cast<int64_t>(prompt.size()) + steps);
  std::vector<float> logits = dec.feed(prompt);
  for (int64_t i = 0; i < steps; ++i) {
    const int32_t next = hf::choose_next_token(logits, temperature, seed, i);
    d->generated.push_back(next);
    if (i + 1 < steps) logits = dec.feed({next});
  }
  d->text = text->text(d->generated);
  d->ms = ms_since(t0);
  return d;
}

}  // namespace

bool is_hf_folder(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir + "/config.json", ec) && !std::filesystem::exists(dir + "/model.json", ec);
}

std::shared_ptr<HfView> open_hf_view(const std::string& dir, const std::string& text, int64_t layer,
                                     const std::string& ablate) {
  auto view = std::make_shared<HfView>();
  view->load(dir);
  if (!text.empty()) view->set_text(text);
  if (layer >= 0) view->set_layer(layer);
  if (!ablate.empty()) view->set_ablated(hf::parse_hf_heads(ablate, view->config()));
  view->wait();
  if (!view->error().empty()) throw Error(view->error());
  return view;
}

HfView::~HfView() {
  // A desktop task is a std::async future: its destructor waits anyway; say so here.
  if (worker_.valid()) worker_.wait();
  if (decoder_.valid()) decoder_.wait();
}

// [SECTION] loading

void HfView::load(const std::string& dir, int64_t mem_limit) {
  // Everything is read into locals first: a refusal leaves the view as it was.
  const hf::HfConfig config = hf::read_hf_config(dir);
  auto text = std::make_shared<const hf::HfText>(hf::open_hf_text(dir, false));
  std::vector<int32_t> keep;  // the text on screen, when it fits this model
  std::vector<hf::Span> spans;
  if (!input_text_.empty() && text->tokenizer) {
    try {
      keep = text->encode(input_text_, config, dir, &spans);
      hf::check_tokens(config, keep);
    } catch (const Error&) {
      keep.clear();
    }
  }
  const int64_t passes = passes_bytes(config, static_cast<int64_t>(keep.size()));
  auto m = std::make_shared<const hf::HfModel>(
      hf::load_hf_checked(dir, passes, mem_limit, trf("%s in the app (the weights and two passes)", dir.c_str())));
  const int64_t predicted = checked_add(hf::predict_hf_model_bytes(dir), passes, "memory");

  wait();  // a run of the previous folder finishes before its model goes
  ++epoch_;
  model_ = std::move(m);
  dir_ = dir;
  text_ = std::move(text);
  predicted_bytes_ = predicted;
  repeated_.reset();
  run_.reset();
  dla_token_ = -1;  // a token of the last folder may not exist in this one
  decoded_.reset();
  error_.clear();
  layer_ = std::min(layer_, config.layers - 1);
  std::erase_if(ablated_, [&](const model::HeadRef& h) { return h.layer >= config.layers || h.head >= config.heads; });
  if (!keep.empty()) {
    std::vector<HfToken> toks;
    for (size_t i = 0; i < keep.size(); ++i) toks.push_back({keep[i], text_->label(keep[i]), spans[i]});
    set_input(std::move(toks), input_text_);
    return;
  }
  // The default input: the sentence when the model has a tokenizer and the positions for it,
  // else a repeated random sequence (BOS + r + r), where induction heads show.
  if (text_->tokenizer) {
    try {
      return set_text(kDefaultText);
    } catch (const Error&) {
    }
  }
  set_tokens(hf::repeated_random_tokens(config, 8, kRepeatSeed));
}

// [SECTION] settings

void HfView::set_text(const std::string& text) {
  if (!loaded()) throw Error(tr("no model is loaded"));
  if (text.empty()) throw Error(tr("type some text first"));
  std::vector<hf::Span> spans;
  const std::vector<int32_t> ids = text_->encode(text, config(), dir_, &spans);
  hf::check_tokens(config(), ids);
  check_fits(passes_bytes(config(), static_cast<int64_t>(ids.size())), 0, tr("this text's two passes"),
                    tr("a shorter text"));
  std::vector<HfToken> toks;
  for (size_t i = 0; i < ids.size(); ++i) toks.push_back({ids[i], text_->label(ids[i]), spans[i]});
  set_input(std::move(toks), text);
}

void HfView::set_tokens(std::vector<int32_t> ids) {
  if (!loaded()) throw Error(tr("no model is loaded"));
  hf::check_tokens(config(), ids);
  check_fits(passes_bytes(config(), static_cast<int64_t>(ids.size())), 0, tr("this text's two passes"),
                    tr("fewer tokens"));
  std::vector<HfToken> toks;
  for (int32_t id : ids) toks.push_back({id, text_->label(id), {0, 0}});
  set_input(std::move(toks), "");
}

void HfView::set_input(std::vector<HfToken> tokens, std::string text) {
  tokens_ = std::move(tokens);
  input_text_ = std::move(text);
  request();
}

std::vector<int32_t> HfView::token_ids() const {
  std::vector<int32_t> ids;
  for (const HfToken& t : tokens_) ids.push_back(t.id);
  return ids;
}

void HfView::set_layer(int64_t layer) {
  if (!loaded()) throw Error(tr("no model is loaded"));
  if (layer < 0 || layer >= config().layers)
    throw Error(trf("layer %lld: this model has %lld layers (0 to %lld)", static_cast<long long>(layer),
                    static_cast<long long>(config().layers), static_cast<long long>(config().layers - 1)));
  layer_ = layer;
  request();
}

bool HfView::is_ablated(model::HeadRef h) const {
  return std::find(ablated_.begin(), ablated_.end(), h) != ablated_.end();
}

void HfView::toggle(model::HeadRef h) {
  auto heads = ablated_;
  if (auto it = std::find(heads.begin(), heads.end(), h); it != heads.end())
    heads.erase(it);
  else
    heads.push_back(h);
  set_ablated(std::move(heads));
}

void HfView::set_ablated(std::vector<model::HeadRef> heads) {
  if (!loaded()) throw Error(tr("no model is loaded"));
  for (const model::HeadRef& h : heads)
    if (h.layer < 0 || h.layer >= config().layers || h.head < 0 || h.head >= config().heads)
      throw Error(trf("head %lld.%lld is not in this model (%lld layers x %lld heads)", static_cast<long long>(h.layer),
                      static_cast<long long>(h.head), static_cast<long long>(config().layers),
                      static_cast<long long>(config().heads)));
  ablated_ = std::move(heads);
  request();
}

void HfView::set_dla_token(int32_t token) {
  if (!loaded()) throw Error(tr("no model is loaded"));
  if (token >= config().vocab || token < -1)
    throw Error(trf("token %d is outside the vocabulary (0..%lld)", token, static_cast<long long>(config().vocab - 1)));
  dla_token_ = token;
  request();
}

void HfView::decode(int64_t steps, double temperature, uint64_t seed) {
  if (!loaded()) throw Error(tr("no model is loaded"));
  if (!(temperature >= 0) || temperature > 100) throw Error(tr("the temperature is 0 (greedy) or a positive number"));
  const int64_t T = static_cast<int64_t>(tokens_.size());
  if (steps < 1 || T + steps > config().max_positions)
    throw Error(trf("decode 1 to %lld tokens: the model reads %lld positions and the input has %lld",
                    static_cast<long long>(std::max<int64_t>(config().max_positions - T, 0)),
                    static_cast<long long>(config().max_positions), static_cast<long long>(T)));
  if (decoder_.valid()) decoder_.wait();  // one decode at a time: the last one asked wins
  decoder_epoch_ = epoch_;
  decoder_ = start_task([model = model_, text = text_, prompt = token_ids(), steps, temperature, seed] {
    return compute_decode(model, text, prompt, steps, temperature, seed);
  });
}

// [SECTION] tasks

void HfView::request() {
  if (!loaded() || tokens_.empty()) return;
  if (worker_.valid()) {
    pending_ = true;  // the running job is stale; start again when it lands
    return;
  }
  launch();
}

void HfView::launch() {
  pending_ = false;
  worker_epoch_ = epoch_;
  worker_ = start_task([q = RunRequest{model_, token_ids(), layer_, ablated_, repeated_, dla_token_}] { return compute_run(q); });
}

bool HfView::poll() {
  bool fresh = false;
  if (worker_.valid() && worker_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try {
      std::shared_ptr<const HfRun> r = worker_.get();
      if (worker_epoch_ == epoch_) {
        repeated_ = r->repeated;
        sampling_.set_logits(r->whole->last_logits);
        run_ = std::move(r);
        error_.clear();
        ++revision_;
        fresh = true;
      }
    } catch (const std::exception& e) {  // Error, or bad_alloc past the prediction
      error_ = one_line(e.what());
    }
    if (pending_) launch();
  }
  if (decoder_.valid() && decoder_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try {
      std::shared_ptr<const HfDecoded> d = decoder_.get();
      if (decoder_epoch_ == epoch_) {
        decoded_ = std::move(d);
        fresh = true;
      }
    } catch (const std::exception& e) {
      error_ = one_line(e.what());
    }
  }
  return fresh;
}

void HfView::wait() {
  while (worker_.valid() || decoder_.valid()) {
    if (worker_.valid()) worker_.wait();
    if (decoder_.valid()) decoder_.wait();
    poll();
  }
}

std::shared_ptr<RunData> HfView::run_data() const {
  if (!run_) return nullptr;
  auto d = std::make_shared<RunData>();
  const int64_t T = static_cast<int64_t>(run_->tokens.size());
  d->config = hf::hf_attention_config(config(), T);
  d->run.trace = run_->trace;
  std::vector<std::string> labels;
  for (int32_t id : run_->tokens) labels.push_back(text_->label(id));
  d->q_tokens = {labels};
  d->k_tokens = {labels};
  d->compute_ms = run_->compute_ms;
  return d;
}

}  // namespace attnsim::app
