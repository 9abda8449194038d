#include "views/decode_run.h"

#include <cmath>

#include "views/model_view.h"
#include "engine/error.h"
#include "model/formats/checkpoint.h"
#include "model/experiments/decode.h"
#include "model/formats/checkpoint_text.h"

namespace attnsim::app {

namespace {

// What a run decodes: the stack, its weights, the prompts as token ids, the labels.
struct Stack {
  StackConfig config;
  StackWeights weights;
  std::vector<std::vector<int64_t>> prompts;
  std::vector<std::string> labels;
};

std::string visible(std::string label) { return label == " " ? "·" : label; }

Stack stack_for(const Scenario& s, const std::string& policy, const std::string& model_dir, DecodeRun& run) {
  Stack st;
  if (!s.decode.trained) {
    st.config = stack_config_for(s, policy);
    st.prompts = prompts_for(s);
    st.weights = random_stack_weights(st.config);
    for (int64_t t = 0; t < kVocabSize; ++t) st.labels.push_back(visible(decode_text({t})));
    return st;
  }
  run.trained = true;
  run.model_dir = decode_model_dir(s.decode, model_dir);
  const model::Model m = model::load_checkpoint(run.model_dir);
  const model::CheckpointText text = model::checkpoint_text(run.model_dir, m.config);  // a language model's tokenizer
  model::ScenarioStack ms = model::scenario_stack(m, s.decode, policy, [&](const std::string& p) { return text.encode(p); });
  st.config = ms.config;
  st.weights = std::move(ms.weights);
  st.prompts = std::move(ms.prompts);
  for (int64_t t = 0; t < m.config.vocab; ++t) st.labels.push_back(visible(text.label(static_cast<int32_t>(t))));
  return st;
}

// (1,a,b,c) -> (a,b,c) copy
Tensor squeeze_copy(const Tensor& t) { return t.contiguous().clone().view({t.size(1), t.size(2), t.size(3)}); }

// Per position: |a - b| / |b| over rows of (T,d) tensors
std::vector<double> drift(const std::vector<Tensor>& rows, const Tensor& full) {
  std::vector<double> out;
  int64_t at = 0;
  const int64_t d = full.size(1);
  for (const Tensor& r : rows)
    for (int64_t i = 0; i < r.size(0); ++i, ++at) {
      double num = 0, den = 0;
      for (int64_t e = 0; e < d; ++e) {
        const double a = r.at({i, e}), b = full.at({at, e});
        num += (a - b) * (a - b);
        den += b * b;
      }
      out.push_back(std::sqrt(num / std::max(den, 1e-30)));
    }
  return out;
}

}  // namespace

const std::string& DecodeRun::label(int64_t token) const {
  static const std::string unknown = "?";
  return token >= 0 && token < static_cast<int64_t>(labels.size()) ? labels[static_cast<size_t>(token)] : unknown;
}

int64_t copy_source(const std::vector<int64_t>& tokens) {
  const int64_t t = static_cast<int64_t>(tokens.size()) - 1;
  for (int64_t j = t - 1; j >= 1; --j)
    if (tokens[static_cast<size_t>(j)] == tokens[static_cast<size_t>(t)]) return j + 1;
  return -1;
}

std::string decode_model_dir(const DecodePreset& preset, const std::string& given) {
  if (!preset.model.empty()) return model::shipped_models_dir() + "/" + preset.model;
  return given.empty() ? default_model_dir() : given;
}

DecodeRun run_decode(const Scenario& s, const std::string& policy, const std::string& model_dir) {
  DecodeRun run;
  Stack stack = stack_for(s, policy, model_dir, run);
  run.config = stack.config;
  run.labels = std::move(stack.labels);
  const std::vector<std::vector<int64_t>>& prompts = stack.prompts;
  Decoder dec(run.config, prompts, stack.weights);
  run.sequences = dec.sequences();
  run.prompt_length = static_cast<int64_t>(dec.prompt(0).size());
  run.storage_bytes = dec.cache_storage_bytes();
  run.slots = dec.paged() ? dec.block_pool().blocks() * run.config.block_size
                          : run.config.policy.slots(run.config.t_max);
  int64_t calls = 0;
  for (const auto& p : prompts) calls = std::max<int64_t>(calls, static_cast<int64_t>(p.size()) + s.decode.steps);
  std::vector<Tensor> rows;
  for (bool first = true; first || dec.length() < calls; first = false) {
    DecodeStep st = first ? dec.prefill() : dec.step();
    DecodeFrame f;
    f.rows = dec.paged() ? st.hidden[0].size(0) : st.rows;
    f.tokens = dec.tokens(0);
    f.first_position = static_cast<int64_t>(f.tokens.size()) - f.rows;
    f.next = st.next[0];
    f.generated = static_cast<int64_t>(f.tokens.size()) > static_cast<int64_t>(prompts[0].size());
    if (run.trained) f.copy_source = copy_source(f.tokens);
    rows.push_back(st.hidden[0]);
    for (int64_t l = 0; l < run.config.layers; ++l) {
      const Trace& t = st.traces[0][l];
      if (dec.paged()) {
        f.k_cache.push_back(squeeze_copy(dec.pools()[l].gather_k(dec.tables()[0], dec.tables()[0].length)));
        f.v_cache.push_back(squeeze_copy(dec.pools()[l].gather_v(dec.tables()[0], dec.tables()[0].length)));
      } else {
        f.k_cache.push_back(squeeze_copy(dec.caches()[l].k().narrow(0, 0, 1)));
        f.v_cache.push_back(squeeze_copy(dec.caches()[l].v().narrow(0, 0, 1)));
      }
      const Tensor& a = t.at("alpha").out;  // (B,h,n,t'): sequence 0, last new row
      f.alpha.push_back(a.narrow(0, 0, 1).narrow(2, a.size(2) - 1, 1).contiguous().clone().view({a.size(1), a.size(3)}));
    }
    if (dec.paged()) {
      for (int64_t p = 0; p < dec.tables()[0].length; ++p) f.slot_positions.push_back(p);
      for (int64_t i = 0; i < f.rows; ++i) f.append_slots.push_back(f.first_position + i);
      f.tables = dec.tables();
      f.free_list = dec.block_pool().free_list();
    } else {
      f.slot_positions = dec.caches()[0].slot_positions();
      for (int64_t i = 0; i < f.rows; ++i)
        f.append_slots.push_back(run.config.policy.slot_of(f.first_position + i, run.config.t_max));
    }
    f.traces = std::move(st.traces[0]);
    f.used_bytes = dec.cache_used_bytes();
    run.frames.push_back(std::move(f));
  }
  if (!dec.paged() && run.config.policy.kind != PolicyKind::Full) {
    const std::vector<int64_t>& tokens = dec.tokens(0);
    StackConfig full = run.config;
    full.policy = CachePolicy{};
    const Tensor ref = Decoder(full, {tokens}, stack.weights).prefill().hidden[0];  // (T,d): every key kept
    run.drift_policy = drift(rows, ref);
    StackConfig window = run.config;
    window.policy.kind = PolicyKind::Window;
    window.policy.window = run.config.policy.slots(run.config.t_max);
    window.policy.sink = 0;
    run.window_text = window.policy.text();
    const std::vector<Tensor> window_rows = model::fed_rows(window, stack.weights, tokens);
    run.drift_window = drift(window_rows, ref);
    if (run.trained) {
      run.loss_full = model::next_token_losses({ref}, tokens, stack.weights);
      run.loss_policy = model::next_token_losses(rows, tokens, stack.weights);
      run.loss_window = model::next_token_losses(window_rows, tokens, stack.weights);
    }
  }
  return run;
}

}  // namespace attnsim::app
