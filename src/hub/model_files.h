// Which files of a Hugging Face model repository attnsim opens: the folder format, nothing of
// what is inside the files.
//   config.json                                            always
//   model.safetensors, else model.safetensors.index.json   the weights (+ every shard the
//                                                          index names)
//   tokenizer.json and/or vocab.json + merges.txt          at least one of the two forms
//   tokenizer_config.json                                  when there is one
// Used for both sides: what to fetch from the Hub's file list, and whether a snapshot in the
// cache is complete.
#pragma once

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
  std::string missing;             // what a model needs and `has` lacks ("" = nothing)
};

ModelFiles select_model_files(const std::function<bool(const std::string&)>& has);

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
