#include "trace_json.h"

#include "npy.h"

namespace attnsim {

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
