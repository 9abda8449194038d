#include "model/formats/checkpoint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/atomic_file.h"
#include "engine/error.h"
#include "engine/nesting.h"
#include "engine/npy.h"
#include "engine/read_file.h"

namespace fs = std::filesystem;

namespace attnsim::model {

// [SECTION] config <-> json

nlohmann::json config_to_json(const ModelConfig& c) {
  nlohmann::json j = {{"vocab", c.vocab},   {"seq_len", c.seq_len},     {"d_model", c.d_model}, {"heads", c.heads},
                      {"kv_heads", c.kv_group_count()}, {"layers", c.layers}, {"layernorm", c.layernorm},
                      {"mlp", c.mlp},       {"bias", c.bias},           {"seed", c.seed}};
  // only when set: checkpoints written before these existed keep their model.json byte for byte
  if (c.tied) j["tied"] = true;
  if (c.rmsnorm) j["rmsnorm"] = true;
  if (c.swiglu) j["swiglu"] = true;
  if (c.rope()) j["rope_theta"] = c.rope_theta;
  if (c.torch_init) j["torch_init"] = true;
  return j;
}

ModelConfig config_from_json(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) throw Error(what + ": \"config\" must be an object");
  ModelConfig c;
  auto size = [&](const char* key, int64_t& out) {
    if (!j.contains(key)) throw Error(what + ": config has no \"" + key + "\"");
    const auto& v = j.at(key);
    if (!v.is_number_integer()) throw Error(what + ": config \"" + key + "\" must be an integer");
    out = v.get<int64_t>();
  };
  auto flag = [&](const char* key, bool& out) {
    if (!j.contains(key)) return;
    if (!j.at(key).is_boolean()) throw Error(what + ": config \"" + key + "\" must be true or false");
    out = j.at(key).get<bool>();
  };
  size("vocab", c.vocab);
  size("seq_len", c.seq_len);
  size("d_model", c.d_model);
  size("heads", c.heads);
  size("layers", c.layers);
  if (j.contains("kv_heads")) {  // absent: MHA, as written before GQA existed
    size("kv_heads", c.kv_heads);
    if (c.kv_heads <= 0) throw Error(what + ": config \"kv_heads\" must be at least 1");
  }
  flag("layernorm", c.layernorm);
  flag("mlp", c.mlp);
  flag("bias", c.bias);
  flag("tied", c.tied);
  flag("rmsnorm", c.rmsnorm);
  flag("swiglu", c.swiglu);
  flag("torch_init", c.torch_init);
  if (j.contains("rope_theta")) {
    if (!j.at("rope_theta").is_number()) throw Error(what + ": config \"rope_theta\" must be a number");
    c.rope_theta = j.at("rope_theta").get<double>();
  }
  if (j.contains("seed") && j.at("seed").is_number_unsigned()) c.seed = j.at("seed").get<uint64_t>();
  try {
    validate(c);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
  return c;
}

// [SECTION] files

void write_text_file(const std::string& path, const std::string& text) { write_file_atomically(path, text); }

// [SECTION] save

void save_checkpoint(const Model& model, const std::string& dir_in, const nlohmann::json& meta) {
  fs::path dir = fs::path(dir_in);
  if (!dir.has_filename()) dir = dir.parent_path();  // "out/" -> "out"
  const fs::path tmp = dir.string() + ".tmp-" + std::to_string(getpid());
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) throw Error(dir.string() + ": cannot create the checkpoint folder (" + ec.message() + ")");
  try {
    nlohmann::json j = meta.is_object() ? meta : nlohmann::json::object();
    j["format"] = "attnsim-model";
    j["version"] = 1;
    j["config"] = config_to_json(model.config);
    j["parameters"] = nlohmann::json::array();
    for (size_t i = 0; i < model.params.names.size(); ++i) {
      const std::string file = model.params.names[i] + ".npy";
      write_npy((tmp / file).string(), model.params.tensors[i]);
      j["parameters"].push_back({{"name", model.params.names[i]}, {"file", file},
                                 {"shape", model.params.tensors[i].shape()}, {"dtype", "float32"}});
    }
    write_text_file((tmp / "model.json").string(), j.dump(1) + "\n");
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  // Swap into place: an existing checkpoint is moved aside first and removed after.
  const fs::path old = dir.string() + ".old-" + std::to_string(getpid());
  const bool had = fs::exists(dir);
  if (had) {
    // Only replace what is a checkpoint: never delete a folder the user made for something else.
    if (!fs::exists(dir / "model.json")) {
      bool empty = fs::is_directory(dir) && fs::is_empty(dir);
      if (!empty) {
        fs::remove_all(tmp, ec);
        throw Error(dir.string() + ": exists and is not a checkpoint; choose another --out");
      }
    }
    fs::rename(dir, old, ec);
    if (ec) {
      fs::remove_all(tmp, ec);
      throw Error(dir.string() + ": cannot replace (" + ec.message() + ")");
    }
  }
  fs::rename(tmp, dir, ec);
  if (ec) {
    const std::string why = ec.message();
    if (had) fs::rename(old, dir, ec);
    fs::remove_all(tmp, ec);
    throw Error(dir.string() + ": cannot move the finished checkpoint into place (" + why + ")");
  }
  if (had) fs::remove_all(old, ec);
}

// [SECTION] load

CheckpointHeader read_checkpoint_header(const std::string& dir_in) {
  const fs::path dir(dir_in);
  const std::string json_path = (dir / "model.json").string();
  if (!fs::is_directory(dir)) throw Error(dir_in + ": not a checkpoint folder (no such directory)");
  CheckpointHeader h;
  nlohmann::json& j = h.meta;
  j = parse_json(read_text_file(json_path, 1 << 20), json_path);  // nesting bounded (engine/nesting.h)
  // Every field is type-checked where it is read; a value of the wrong JSON type anywhere
  // else (a name that is a number, a shape of strings) still ends as one line naming the file.
  try {
    if (!j.is_object() || j.value("format", "") != "attnsim-model")
      throw Error(json_path + ": not an attnsim model (\"format\" must be \"attnsim-model\")");
    if (!j.contains("version") || j["version"] != 1)
      throw Error(json_path + ": unsupported version (this build reads version 1)");
    if (!j.contains("config")) throw Error(json_path + ": no \"config\"");
    h.config = config_from_json(j["config"], json_path);
    const std::vector<ParamSpec> specs = param_specs(h.config);
    if (!j.contains("parameters") || !j["parameters"].is_array())
      throw Error(json_path + ": no \"parameters\" list");
    const auto& listed = j["parameters"];
    if (listed.size() != specs.size())
      throw Error(json_path + ": lists " + std::to_string(listed.size()) + " parameters but its config needs " +
                  std::to_string(specs.size()));
    for (size_t i = 0; i < specs.size(); ++i) {
      const auto& e = listed[i];
      const ParamSpec& s = specs[i];
      if (!e.is_object() || e.value("name", "") != s.name)
        throw Error(json_path + ": parameter " + std::to_string(i) + " should be '" + s.name + "'");
      if (!e.contains("shape") || !e["shape"].is_array() || e["shape"].get<std::vector<int64_t>>() != s.shape)
        throw Error(json_path + ": '" + s.name + "' should have shape " + format_dims(s.shape));
      if (e.value("dtype", "float32") != "float32")
        throw Error(json_path + ": '" + s.name + "' has dtype " + e.value("dtype", "") + ", expected float32");
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(json_path + ": a field has the wrong type (" + std::string(e.what()) + ")");
  }
  return h;
}

Model load_checkpoint(const std::string& dir_in, nlohmann::json* meta) {
  CheckpointHeader h = read_checkpoint_header(dir_in);
  const fs::path dir(dir_in);
  Model m;
  m.config = h.config;
  for (const ParamSpec& s : param_specs(m.config)) {
    const std::string file = (dir / (s.name + ".npy")).string();
    if (!fs::exists(file)) throw Error(file + ": missing (the checkpoint's parameter '" + s.name + "')");
    Tensor t = read_npy(file);
    if (t.dtype() != DType::F32) throw Error(file + ": dtype must be float32");
    if (t.shape() != s.shape)
      throw Error(file + ": shape " + format_dims(t.shape()) + " but the config needs " + format_dims(s.shape));
    for (int64_t k = 0; k < t.numel(); ++k)
      if (!std::isfinite(t.f32()[k]))
        throw Error(file + ": element " + std::to_string(k) + " is not finite (" + std::to_string(t.f32()[k]) + ")");
    m.params.names.push_back(s.name);
    m.params.tensors.push_back(std::move(t));
  }
  if (meta) *meta = std::move(h.meta);
  return m;
}

int64_t checkpoint_bytes(const ModelConfig& config) { return 4 * param_count(config); }

std::string shipped_models_dir() {
  if (const char* env = std::getenv("ATTNSIM_MODELS"); env && *env) return env;
  return std::string(ATTNSIM_SOURCE_DIR) + "/assets/models";
}

}  // namespace attnsim::model
