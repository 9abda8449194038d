// Checkpoints are folders a PyTorch user can load:
//   DIR/model.json          {"format": "attnsim-model", "version": 1, "config": {...},
//                            (config "kv_heads" absent = heads: MHA checkpoints from before GQA)
//                            "parameters": [{"name", "file", "shape", "dtype"}...], "step", ...}
//   DIR/<name>.npy          one float32 C-order array per parameter, torch.nn layout
//                           (e.g. layers.0.attn.W_Q.weight.npy, (d, d))
// tools/model_torch.py builds the same model as an nn.Module and loads such a folder.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/formats/toy_model.h"

namespace attnsim::model {

// Writes the folder next to DIR under a temporary name and renames it into place, so a
// failed save leaves no half-written checkpoint (an existing DIR is replaced only at the end).
// `meta` (step, task, metrics) is stored in model.json beside the config.
void save_checkpoint(const Model& model, const std::string& dir, const nlohmann::json& meta = {});

// Throws Error naming the file and the problem: missing or unreadable model.json, a config
// that fails validate(), a parameter list that differs from the config's, a missing .npy,
// a wrong shape or dtype, a non-finite value.
Model load_checkpoint(const std::string& dir, nlohmann::json* meta = nullptr);

// model.json alone, checked as load_checkpoint checks it (format, version, config, the
// parameter list's names, shapes and dtypes) with no .npy read: what a command needs to
// predict its memory before it loads anything.
struct CheckpointHeader {
  ModelConfig config;
  nlohmann::json meta;  // the whole model.json
};
CheckpointHeader read_checkpoint_header(const std::string& dir);
// Bytes load_checkpoint holds for a checkpoint of this config (the parameters, once).
int64_t checkpoint_bytes(const ModelConfig& config);

nlohmann::json config_to_json(const ModelConfig& config);
ModelConfig config_from_json(const nlohmann::json& j, const std::string& what);

// Writes text to path through a temporary file renamed into place; every write and the
// close are checked. Throws Error naming the path.
void write_text_file(const std::string& path, const std::string& text);

// The folder of the shipped checkpoints: $ATTNSIM_MODELS when set, else assets/models in the
// source tree (the app's default model and the lessons' model.* quantities read from it).
std::string shipped_models_dir();

}  // namespace attnsim::model
