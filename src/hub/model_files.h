// Which files of a Hugging Face model repository attnsim opens: the folder format, nothing of
// what is inside the files.
//   config.json                                            always
//   model.safetensors, else model.safetensors.index.json   the weights (+ every shard the
//                                                          index names)
//   tokenizer.json and/or vocab.json + merges.txt          when the repository has them: a
//                                                          folder without opens on token ids
//                                                          (--tokens), so one is not required
//   tokenizer_config.json                                  when there is one
// Used for both sides: what to fetch from the Hub's file list, and whether a snapshot in the
// cache is complete; the same set a local folder opens with.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace attnsim::hub {

inline constexpr const char* kConfig = "config.json";
inline constexpr const char* kWeights = "model.safetensors";
inline constexpr const char* kWeightsIndex = "model.safetensors.index.json";

struct ModelFiles {
  std::vector<std::string> files;  // in fetch order: config, tokenizer, weights or index
  bool sharded = false;            // files holds the index; the shards come from it
  bool tokenizer = false;          // files holds one (tokenizer.json, or vocab.json + merges.txt)
  std::string missing;             // what a model needs and `has` lacks ("" = nothing)
};

ModelFiles select_model_files(const std::function<bool(const std::string&)>& has);
// The set in a folder (a snapshot in the cache: a link to a missing blob counts as missing).
ModelFiles folder_files(const std::string& dir);

// The most bytes attnsim reads of each small file of the set, so that a download is refused
// before the body of one the model info says is larger: config.json 1 MiB, the tokenizer's
// files 32 MiB (hf_tokenizer.h's kMaxTokenizerBytes), the index 16 MiB (as the model's reader).
// -1 for the weights and shards, which the caller's memory check bounds (hub.h's check_weights).
int64_t max_file_bytes(const std::string& file);

// The shard names the index's weight_map holds, once each, sorted. Each must be a plain file
// name ([A-Za-z0-9._-], no leading '.'), at most 4,096 of them (as the model's reader allows).
// Throws Error naming the index.
std::vector<std::string> read_shard_names(const std::string& index_path);
// The same from the index's text (the page has it in memory); `what` names it in errors.
std::vector<std::string> shard_names(std::string_view index_json, const std::string& what);

}  // namespace attnsim::hub

namespace attnsim::hub {

// What the folder (a snapshot in the cache) lacks of select_model_files' set, shards included:
// "" when it is complete. A link to a missing blob counts as missing.
std::string snapshot_missing(const std::string& dir);

}  // namespace attnsim::hub
