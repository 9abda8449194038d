#include "decode.h"

#include <cmath>

#include "error.h"
#include "forward_steps.h"

namespace attnsim {

MhaConfig cached_call_config(const MhaConfig& c, int64_t batch, int64_t n) {
  MhaConfig m = c;
  m.batch = batch;
  m.tq = m.tk = n;
  m.self_attention = true;
  m.mask = MaskSpec{};
  m.train = false;
  m.dropout = 0.0f;
  m.bug = Bug::None;
  validate(m);
  return m;
}

namespace {

void check_rows(const MhaConfig& m, const Tensor& x) {
  if (!x.defined() || x.dtype() != DType::F32 || x.dim() != 3 || x.size(0) != m.batch || x.size(2) != m.d_model)
    throw Error("decode input must be float32 (B,n,d) = (" + std::to_string(m.batch) + ", n, " +
                std::to_string(m.d_model) + "), got " + (x.defined() ? format_dims(x.shape()) : "nothing"));
}

// (1,1,n,keys) bool, true = hidden: new row i (position t0+i) may not see a later position.
Tensor causal_over(const std::vector<int64_t>& key_positions, int64_t t0, int64_t n) {
  const int64_t keys = static_cast<int64_t>(key_positions.size());
  Tensor mask = Tensor::empty({1, 1, n, keys}, DType::Bool);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < keys; ++j) mask.b8()[i * keys + j] = key_positions[j] > t0 + i;
  return mask;
}

Step with_counts(Step s, const NonFinite& c) {
  s.counts_known = true;
  s.nan_count = c.nan;
  s.neginf_count = c.neginf;
  s.posinf_count = c.posinf;
  return s;
}

// scores_scaled, mask, scores_masked, alpha, alpha_dropped after `scores` (B,h,n,keys);
// returns alpha. The mask applies only when several new rows arrive at once (a prefill).
Tensor add_softmax_steps(Trace& t, const MhaConfig& m, const Tensor& scores, const Tensor& mask, Backend& be) {
  const std::string bn = be.name();
  SoftmaxSpec spec;
  spec.scale = 1.0f / std::sqrt(static_cast<float>(m.head_dim()));
  if (mask.defined()) spec.mask = mask.expand(scores.shape());
  const SoftmaxSteps sm = be.scale_mask_softmax(scores, spec);
  auto counted = [&](Step s, const NonFinite& c) { return sm.counted ? with_counts(std::move(s), c) : s; };
  t.add(counted(made_step("scores_scaled", "scale ×1/√dk", {"scores"}, StepKind::Compute, sm.scaled, bn),
                sm.scaled_counts));
  const char* softmax_input = "scores_scaled";
  if (mask.defined()) {
    Step ms = made_step("mask", "build mask", {}, StepKind::Compute, mask, "");
    ms.note = "causal among the new rows";
    t.add(std::move(ms));
    t.add(counted(made_step("scores_masked", "masked_fill(-inf)", {"scores_scaled", "mask"}, StepKind::Compute,
                            sm.masked, bn),
                  sm.masked_counts));
    softmax_input = "scores_masked";
  } else {
    t.add(skipped_step("mask", "build mask", {}, "one new row sees every cached key"));
    t.add(skipped_step("scores_masked", "masked_fill(-inf)", {"scores_scaled", "mask"}, "no mask"));
  }
  t.add(counted(made_step("alpha", "softmax(dim=-1)", {softmax_input}, StepKind::Compute, sm.alpha, bn),
                sm.alpha_counts));
  t.add(skipped_step("alpha_dropped", "dropout", {"alpha"}, "eval mode: dropout is the identity"));
  return sm.alpha;
}

std::string range_text(int64_t first, int64_t n) {
  return n == 1 ? std::to_string(first) : std::to_string(first) + ".." + std::to_string(first + n - 1);
}

}  // namespace

// [SECTION] contiguous cache

Trace attend_cached(const MhaConfig& config, const MhaWeights& w, KvCache& cache, const Tensor& x, Backend& be) {
  const MhaConfig m = cached_call_config(config, x.defined() && x.dim() == 3 ? x.size(0) : config.batch,
                                         x.defined() && x.dim() == 3 ? x.size(1) : 1);
  check_rows(m, x);
  const Tensor& ks = cache.k_storage();
  if (ks.size(0) != m.batch || ks.size(1) != m.kv_group_count() || ks.size(3) != m.head_dim())
    throw Error("the cache is " + format_dims(ks.shape()) + " but the layer needs (B,g,slots,dk) with B=" +
                std::to_string(m.batch) + " g=" + std::to_string(m.kv_group_count()) +
                " dk=" + std::to_string(m.head_dim()));
  const int64_t n = m.tq, t0 = cache.length();
  const std::string bn = be.name();
  Trace t;
  MhaConfig at = m;
  at.position0 = t0;  // RoPE turns the new rows at their absolute positions; the cache keeps rotated K
  const Heads heads = add_head_steps(t, at, w, MhaInputs{x, x, x, Tensor(), {}}, be);

  // the append: k_heads / v_heads copied into their slots      (B,g,n,dk) views of the cache
  const KvCache::Written wr = cache.append(heads.k, heads.v);
  const std::string slots = "slot " + range_text(wr.first_slot, n) + " of " + std::to_string(cache.slots());
  for (auto [name, from, out] : {std::tuple{"k_cache_append", heads.k_name, wr.k}, {"v_cache_append", "v_heads", wr.v}}) {
    Step s = made_step(name, "copy into " + slots, {from}, StepKind::Copy, out, bn);
    s.writes_existing = true;
    s.note = "position " + range_text(t0, n) + " written into the preallocated storage";
    t.add(std::move(s));
  }
  // the filled part                                             (B,g,t',dk) view, grows each step
  const std::string narrow = "narrow(2, 0, " + std::to_string(cache.filled()) + ")";
  t.add(with_counts(made_step("k_cache", narrow, {"k_cache_append"}, StepKind::View, cache.k(), bn), cache.k_counts()));
  t.add(with_counts(made_step("v_cache", narrow, {"v_cache_append"}, StepKind::View, cache.v(), bn), cache.v_counts()));
  const KvRead kv = add_group_steps(t, m, cache.k(), cache.v(), "k_cache", "v_cache", be);

  // one row of scores per new token over every cached key      (B,h,n,t')
  const Tensor scores = core_qk(be, heads.q, kv.k);
  t.add(made_step("scores", "matmul q·kᵀ", {heads.q_name, kv.k_name}, StepKind::Compute, scores, bn));
  const Tensor mask = n > 1 ? causal_over(cache.slot_positions(), t0, n) : Tensor();
  const Tensor alpha = add_softmax_steps(t, m, scores, mask, be);
  const Tensor ctx = core_av(be, alpha, kv.v);  // (B,h,n,dk)
  t.add(made_step("ctx_heads", "matmul alpha·v", {"alpha", kv.v_name}, StepKind::Compute, ctx, bn));
  add_merge_steps(t, m, w, ctx, be);
  return t;
}

// [SECTION] paged cache

Trace attend_paged(const MhaConfig& config, const MhaWeights& w, PagedKv& kv, const BlockTable& table,
                   const Tensor& x, Backend& be) {
  const MhaConfig m = cached_call_config(config, 1, x.defined() && x.dim() == 3 ? x.size(1) : 1);
  check_rows(m, x);
  const Tensor& kp = kv.k_pool();
  if (kp.size(1) != m.kv_group_count() || kp.size(3) != m.head_dim())
    throw Error("the block pool is " + format_dims(kp.shape()) + " but the layer needs (blocks,g,block,dk) with g=" +
                std::to_string(m.kv_group_count()) + " dk=" + std::to_string(m.head_dim()));
  const int64_t n = m.tq, t0 = table.length, tn = t0 + n, g = m.kv_group_count(), dk = m.head_dim();
  const std::string bn = be.name();
  Trace t;
  MhaConfig at = m;
  at.position0 = t0;  // as attend_cached: K is cached rotated at its absolute position
  const Heads heads = add_head_steps(t, at, w, MhaInputs{x, x, x, Tensor(), {}}, be);

  kv.write(table, t0, heads.k, heads.v);
  std::string blocks;
  for (int64_t b : table.blocks) blocks += (blocks.empty() ? "" : ", ") + std::to_string(b);
  const std::string where = "position " + range_text(t0, n) + " into block " +
                            std::to_string(table.blocks[t0 / kp.size(2)]) + ", row " + std::to_string(t0 % kp.size(2));
  for (auto [name, from, pool] :
       {std::tuple{"k_cache_append", heads.k_name, kv.k_pool()}, {"v_cache_append", "v_heads", kv.v_pool()}}) {
    Step s = made_step(name, "copy " + where, {from}, StepKind::Copy, pool, bn);
    s.writes_existing = true;
    s.copied_bytes = n * g * dk * 4;  // only the new rows move; the step shows the whole pool
    s.note = "block table [" + blocks + "]";
    t.add(std::move(s));
  }
  for (auto [name, from, pool] : {std::tuple{"k_cache", "k_cache_append", kv.k_pool()}, {"v_cache", "v_cache_append", kv.v_pool()}}) {
    Step s = made_step(name, "block table [" + blocks + "]", {from}, StepKind::View, pool, bn);
    s.note = "the sequence's " + std::to_string(tn) + " positions, read block by block in place";
    t.add(std::move(s));
  }
  if (m.grouped())
    for (const char* name : {"k_grouped", "v_grouped"})
      t.add(skipped_step(name, "head i reads K/V head i/" + std::to_string(m.heads / g), {"k_cache"},
                         "the paged kernel maps each query head to its group while it walks the blocks"));

  const Tensor scores = paged_qk(heads.q, kv.k_pool(), table, tn);  // (1,h,n,tn)
  t.add(made_step("scores", "paged q·kᵀ", {heads.q_name, "k_cache"}, StepKind::Compute, scores, bn));
  Tensor mask;
  if (n > 1) {
    std::vector<int64_t> positions(tn);
    for (int64_t p = 0; p < tn; ++p) positions[p] = p;
    mask = causal_over(positions, t0, n);
  }
  const Tensor alpha = add_softmax_steps(t, m, scores, mask, be);
  const Tensor ctx = paged_av(alpha, kv.v_pool(), table, tn);  // (1,h,n,dk)
  t.add(made_step("ctx_heads", "paged alpha·v", {"alpha", "v_cache"}, StepKind::Compute, ctx, bn));
  add_merge_steps(t, m, w, ctx, be);
  return t;
}

int64_t decode_step_read_bytes(const MhaConfig& c, int64_t batch, int64_t filled) {
  const int64_t d = c.d_model, kv = c.kv_dim();
  const int64_t weights = (2 * d * d + 2 * kv * d + (c.bias ? 2 * d + 2 * kv : 0)) * 4;
  return weights + 2 * batch * kv * filled * 4;
}

}  // namespace attnsim
