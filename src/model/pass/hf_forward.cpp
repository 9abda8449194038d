#include "model/pass/hf_forward.h"

#include "engine/checked.h"
#include "engine/decode.h"
#include "engine/error.h"
#include "model/pass/whole_models.h"
#include "model/pass/whole_pass.h"

namespace attnsim::model::hf {

void check_tokens(const HfConfig& c, const std::vector<int32_t>& tokens) {
  check_token_ids(tokens, c.vocab, c.max_positions);
}

// [SECTION] the whole pass

int64_t predict_hf_forward_bytes(const HfConfig& c, int64_t T, bool keep_every_trace) {
  const MhaConfig a = hf_attention_config(c, T);
  const Size trace = predict_trace_bytes(a), f = 4;
  const Size residual = Size(T) * c.d_model * f * 4 + Size(T) * c.d_ff * f * 3;  // x, norms, MLP hiddens
  const Size alpha_ctx = Size(c.heads) * T * T * f + Size(T) * c.d_model * f;     // kept per layer
  const Size logits = Size(T) * c.vocab * f;
  const Size traces = keep_every_trace ? Size(c.layers) * trace : trace * 2;
  return (traces + Size(c.layers) * alpha_ctx + residual + logits).value();
}

HfForward hf_forward(const HfModel& m, const std::vector<int32_t>& tokens, const HfForwardOptions& o) {
  PassOptions po;
  po.sample = false;
  po.keep_layer = o.keep_layer;
  po.patches = o.patches;
  WholeTrace w = whole_forward(pass_model(m), tokens, {}, po);
  HfForward r;
  for (int64_t l = 0; l < m.config.layers; ++l) {
    Trace& t = w.blocks[static_cast<size_t>(l)];
    r.alpha.push_back(t.at("alpha").out);   // (1,h,T,T)
    r.ctx.push_back(t.at("ctx_heads").out);  // (1,h,T,dk)
    r.traces.push_back(o.keep_layer < 0 || o.keep_layer == l ? attention_steps_of(std::move(t)) : Trace());
  }
  r.logits = w.logits().view({static_cast<int64_t>(tokens.size()), m.config.vocab});  // (T,V)
  return r;
}

// [SECTION] incremental (KV cache)

HfDecoder::HfDecoder(const HfModel& m, int64_t t_max) : model_(m) {
  const HfConfig& c = m.config;
  check_range(t_max, "decode length (prompt + steps)", 1, c.max_positions);
  for (int64_t l = 0; l < c.layers; ++l) caches_.emplace_back(1, c.kv_heads, c.head_dim(), t_max);
}

int64_t HfDecoder::cache_bytes() const {
  int64_t b = 0;
  for (const KvCache& k : caches_) b = checked_add(b, k.storage_bytes());
  return b;
}

std::vector<float> HfDecoder::feed(const std::vector<int32_t>& tokens, std::vector<Trace>* traces) {
  PassOptions po;
  po.sample = false;
  po.caches = &caches_;
  WholeTrace w = whole_forward(pass_model(model_), tokens, {}, po);
  length_ += static_cast<int64_t>(tokens.size());
  if (traces) {
    traces->clear();
    for (Trace& t : w.blocks) traces->push_back(attention_steps_of(std::move(t)));
  }
  const Tensor& logits = w.logits();  // (1,n,V)
  return logits.narrow(1, logits.size(1) - 1, 1).contiguous().to_vector();
}

}  // namespace attnsim::model::hf
