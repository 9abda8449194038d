#include "trace_json.h"

#include <cmath>
#include <vector>

#include "npy.h"

namespace attnsim {

namespace {

// Sums over the logical elements that a second run (another platform, another BLAS) can be
// compared by within float tolerance: the finite values' sum and absolute sum (a bool step
// counts its true elements).
nlohmann::json checksum(const Tensor& t) {
  double sum = 0, abs_sum = 0;
  const bool is_bool = t.dtype() == DType::Bool;
  // Walks the logical elements through the strides (no copy): index -> storage offset.
  const Dims& shape = t.shape();
  const Dims& strides = t.strides();
  std::vector<int64_t> idx(shape.size(), 0);
  const int64_t n = t.numel();
  for (int64_t e = 0; e < n; ++e) {
    int64_t at = 0;
    for (size_t d = 0; d < shape.size(); ++d) at += idx[d] * strides[d];
    if (is_bool) {
      sum += t.b8()[at] ? 1 : 0;
    } else if (const float v = t.f32()[at]; std::isfinite(v)) {
      sum += v;
      abs_sum += std::fabs(v);
    }
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  if (is_bool) abs_sum = sum;
  return {{"sum", sum}, {"abs_sum", abs_sum}};
}

}  // namespace

nlohmann::json config_to_json(const MhaConfig& c) {
  return {{"batch", c.batch},
          {"tq", c.tq},
          {"tk", c.tk},
          {"d_model", c.d_model},
          {"heads", c.heads},
          {"kv_heads", c.kv_group_count()},
          {"kv_repeat_copy", c.kv_repeat_copy},
          {"head_dim", c.head_dim()},
          {"self_attention", c.self_attention},
          {"bias", c.bias},
          {"seed", c.seed},
          {"dropout", c.dropout},
          {"train", c.train},
          {"wo_identity", c.wo_identity},
          {"rope_theta", c.rope_theta},
          {"position0", c.position0},
          {"mask", format_mask_spec(c.mask)},
          {"bug", bug_name(c.bug)}};
}

nlohmann::json trace_to_json(const MhaConfig& config, const Trace& trace) {
  nlohmann::json steps = nlohmann::json::array();
  for (const Step& s : trace.steps) {
    nlohmann::json j = {{"name", s.name},
                        {"op", s.op},
                        {"inputs", s.inputs},
                        {"kind", step_kind_name(s.kind)},
                        {"skipped", s.skipped()},
                        {"is_view", s.is_view()},
                        {"copied_bytes", s.copied_bytes},
                        {"new_bytes", s.new_bytes},
                        {"writes_existing", s.writes_existing},
                        {"nan_count", s.nan_count},
                        {"neginf_count", s.neginf_count},
                        {"posinf_count", s.posinf_count},
                        {"backend", s.backend},
                        {"note", s.note}};
    if (s.out.defined()) {
      j["shape"] = s.out.shape();
      j["strides"] = s.out.strides();
      j["offset"] = s.out.offset();
      j["storage_id"] = s.storage_id;
      j["dtype"] = dtype_name(s.out.dtype());
      j["contiguous"] = s.out.is_contiguous();
      j["checksum"] = checksum(s.out);
    } else {
      j["shape"] = j["strides"] = j["offset"] = j["storage_id"] = nullptr;
    }
    steps.push_back(std::move(j));
  }
  return {{"config", config_to_json(config)},
          {"steps", steps},
          {"held_bytes", trace.held_bytes()},
          {"first_nan_step", trace.first_nan_step()}};
}

void dump_steps(const Trace& trace, const std::string& dir) {
  for (const Step& s : trace.steps)
    if (s.out.defined()) write_npy(dir + "/" + s.name + ".npy", s.out);
}

}  // namespace attnsim
