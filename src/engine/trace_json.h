// The trace as JSON, the format of `attnsim-cli trace --json` and of DIR/trace.json:
//   {"config": {...}, "steps": [{"name", "op", "inputs", "shape", "strides", "offset",
//     "storage_id", "is_view", "copied_bytes", "nan_count", "neginf_count", "skipped",
//     "checksum": {"sum", "abs_sum"} (over the finite values, read through the strides), ...}]}
#pragma once

#include <nlohmann/json.hpp>

#include "mha.h"

namespace attnsim {

nlohmann::json config_to_json(const MhaConfig& config);
nlohmann::json trace_to_json(const MhaConfig& config, const Trace& trace);

// Writes DIR/<step>.npy for every step that ran (logical contents, C order).
void dump_steps(const Trace& trace, const std::string& dir);

}  // namespace attnsim
