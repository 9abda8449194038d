#include "model_files.h"

#include <nlohmann/json.hpp>
#include <filesystem>
#include <set>

#include "engine/error.h"
#include "engine/nesting.h"
#include "engine/read_file.h"

namespace attnsim::hub {

namespace {

constexpr size_t kMaxShards = 4096;            // hf_safetensors.h's kMaxShards
// hf_safetensors.cpp's: a larger index would download and then not open. DeepSeek-V3's
// (92,000 tensors) is ~9 MB.
constexpr int64_t kMaxIndexBytes = 16 << 20;
constexpr int64_t kMaxConfigBytes = 1 << 20;   // real ones are ~1 KB
constexpr int64_t kMaxTokenizerBytes = int64_t{32} << 20;  // hf_tokenizer.h's: the hub links no model code

bool plain_file_name(const std::string& s) {
  if (s.empty() || s.size() > 255 || s.front() == '.') return false;
  for (const char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
      return false;
  return true;
}

}  // namespace

ModelFiles select_model_files(const std::function<bool(const std::string&)>& has) {
  ModelFiles m;
  const auto need = [&](bool ok, const std::string& what) {
    if (!ok) m.missing += (m.missing.empty() ? "" : ", ") + what;
  };
  need(has(kConfig), kConfig);
  if (has(kConfig)) m.files.push_back(kConfig);
  const bool json_tok = has("tokenizer.json"), bpe_tok = has("vocab.json") && has("merges.txt");
  m.tokenizer = json_tok || bpe_tok;
  if (json_tok) m.files.push_back("tokenizer.json");
  if (bpe_tok) {
    m.files.push_back("vocab.json");
    m.files.push_back("merges.txt");
  }
  if (has("tokenizer_config.json")) m.files.push_back("tokenizer_config.json");
  if (has(kWeights)) {
    m.files.push_back(kWeights);
  } else if (has(kWeightsIndex)) {
    m.files.push_back(kWeightsIndex);
    m.sharded = true;
  } else {
    need(false, std::string(kWeights) + " (or " + kWeightsIndex + "; attnsim reads no .bin weights)");
  }
  return m;
}

int64_t max_file_bytes(const std::string& file) {
  if (file == kConfig) return kMaxConfigBytes;
  if (file == kWeightsIndex) return kMaxIndexBytes;
  if (file == "tokenizer.json" || file == "vocab.json" || file == "merges.txt" || file == "tokenizer_config.json")
    return kMaxTokenizerBytes;
  return -1;
}

std::vector<std::string> shard_names(std::string_view index_json, const std::string& what) {
  if (static_cast<int64_t>(index_json.size()) > kMaxIndexBytes)
    throw Error(what + ": over " + std::to_string(kMaxIndexBytes >> 20) + " MiB, more than any safetensors index");
  const nlohmann::json j = parse_json(index_json, what);
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    throw Error(what + ": not a safetensors index (no weight_map object)");
  std::set<std::string> shards;
  for (const auto& [tensor, shard] : j["weight_map"].items()) {
    if (!shard.is_string() || !plain_file_name(shard.get<std::string>()))
      throw Error(what + ": tensor '" + one_line(tensor) + "' names a shard that is not a plain file name: " +
                  one_line(shard.dump()));
    shards.insert(shard.get<std::string>());
    if (shards.size() > kMaxShards)
      throw Error(what + ": more than " + std::to_string(kMaxShards) + " shards");
  }
  if (shards.empty()) throw Error(what + ": the weight_map names no shard");
  return {shards.begin(), shards.end()};
}

std::vector<std::string> read_shard_names(const std::string& index_path) {
  return shard_names(read_text_file(index_path, kMaxIndexBytes), index_path);
}

}  // namespace attnsim::hub

namespace attnsim::hub {

namespace {

bool folder_has(const std::string& dir, const std::string& file) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir + "/" + file, ec);  // follows the link to the blob
}

}  // namespace

ModelFiles folder_files(const std::string& dir) {
  return select_model_files([&](const std::string& file) { return folder_has(dir, file); });
}

std::string snapshot_missing(const std::string& dir) {
  const ModelFiles m = folder_files(dir);
  if (!m.missing.empty() || !m.sharded) return m.missing;
  std::string missing;
  for (const std::string& shard : read_shard_names(dir + "/" + kWeightsIndex))
    if (!folder_has(dir, shard)) missing += (missing.empty() ? "" : ", ") + shard;
  return missing;
}

}  // namespace attnsim::hub
