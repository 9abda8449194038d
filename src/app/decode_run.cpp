#include "app/decode_run.h"

#include <cmath>

#include "engine/error.h"

namespace attnsim::app {

namespace {

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

// Last-layer rows of sequence 0 for every call of a decode under `sc`, feeding `tokens`.
std::vector<Tensor> rows_under(const StackConfig& sc, const std::vector<int64_t>& tokens) {
  Decoder dec(sc, {tokens});  // the whole sequence as the prompt: every token is fed, none generated
  std::vector<Tensor> rows{dec.prefill().hidden[0]};
  while (dec.length() < static_cast<int64_t>(tokens.size())) rows.push_back(dec.step().hidden[0]);
  return rows;
}

}  // namespace

DecodeRun run_decode(const Scenario& s, const std::string& policy) {
  DecodeRun run;
  run.config = stack_config_for(s, policy);
  const std::vector<std::vector<int64_t>> prompts = prompts_for(s);
  Decoder dec(run.config, prompts);
  run.sequences = dec.sequences();
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
    rows.push_back(st.hidden[0]);
    for (int64_t l = 0; l < run.config.layers; ++l) {
      const Trace& t = st.traces[0][l];
      if (dec.paged()) {
        f.k_cache.push_back(squeeze_copy(dec.pools()[l].gather_k(dec.tables()[0], dec.tables()[0].length)));
      } else {
        f.k_cache.push_back(squeeze_copy(dec.caches()[l].k().narrow(0, 0, 1)));
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
    f.layer0 = std::move(st.traces[0][0]);
    f.used_bytes = dec.cache_used_bytes();
    run.frames.push_back(std::move(f));
  }
  if (!dec.paged() && run.config.policy.kind != PolicyKind::Full) {
    const std::vector<int64_t>& tokens = dec.tokens(0);
    StackConfig full = run.config;
    full.policy = CachePolicy{};
    const Tensor ref = Decoder(full, {tokens}).prefill().hidden[0];  // (T,d): every key kept
    run.drift_policy = drift(rows, ref);
    StackConfig window = run.config;
    window.policy.kind = PolicyKind::Window;
    window.policy.window = run.config.policy.slots(run.config.t_max);
    window.policy.sink = 0;
    run.window_text = window.policy.text();
    run.drift_window = drift(rows_under(window, tokens), ref);
  }
  return run;
}

}  // namespace attnsim::app
