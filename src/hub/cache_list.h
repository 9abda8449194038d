// What the Hugging Face cache holds, for the app's list of stored models: every
// models--ORG--NAME/ whose refs/ name a snapshot that select_model_files finds complete, with
// the bytes its files take (each blob once). Python's own downloads are listed too, and
// deleting one removes it for Python as well (the app asks first).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnsim::hub {

struct CachedModel {
  std::string repo;      // "ORG/NAME"
  std::string revision;  // the ref that names the snapshot ("main"); the commit when none does
  std::string commit;
  std::string dir;       // the snapshot folder
  int64_t bytes = 0;     // the snapshot's files
};

// Sorted by repo, then revision. A folder that is not a model repository's, or a damaged
// ref, is skipped: listing never throws for what Python or a crash left behind.
std::vector<CachedModel> list_cached_models(const std::string& cache_dir);

// Removes CACHE/models--ORG--NAME/ whole (every revision, every blob) and its lock folder.
// Throws Error when it cannot (cache_errors.h's words).
void delete_cached_model(const std::string& cache_dir, const std::string& repo);

}  // namespace attnsim::hub
