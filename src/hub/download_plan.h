// What a download of a model fetches, decided from the Hub's model info before any byte of any
// file, for the desktop (pull.cpp) and the page (hub_download_web.cpp) alike:
//   - a pinned commit (ORG/NAME@<40 hex>) is a promise: a model info of another commit is
//     refused, so nothing of that commit is written and no refs/ points at it;
//   - the files a local folder opens with (model_files.h): config.json and the weights; a
//     tokenizer when the repository has one;
//   - each small file within what attnsim reads of it (max_file_bytes): a model info that
//     says config.json is 1e15 bytes is refused here, before its body, not after gigabytes.
// The weights' sizes are the caller's memory check (hub.h's check_weights).
#pragma once

#include <string>
#include <vector>

#include "model_files.h"
#include "model_info.h"
#include "repo_name.h"

namespace attnsim::hub {

// Throws Error (one line naming display_name(ref)) for each refusal above.
ModelFiles plan_download(const RepoRef& ref, const ModelInfo& info);
// Error unless the repository holds every shard the index names; `model` names it in the line.
void check_shards(const ModelInfo& info, const std::vector<std::string>& shards, const std::string& model);

}  // namespace attnsim::hub
