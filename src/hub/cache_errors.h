// The Hugging Face cache's filesystem failures in the project's words: what is wrong, where,
// and what to do (std::filesystem's own text, "filesystem error: cannot create directories:
// Not a directory [...]", says none of it). Three causes a user meets:
//   HF_HUB_CACHE is a file (or sits under one)     set it to a folder
//   the cache cannot be written (read-only, EACCES) make it writable or choose another
//   a ref in the way of a revision                 refs/main is a file where main/x needs a
//                                                  folder (or the other way round)
#pragma once

#include <string>

#include "cache.h"

namespace attnsim::hub {

// `dir` (inside the cache) and its parents; Error as above when they cannot be made.
void make_cache_dir(const RepoCache& cache, const std::string& dir);
// The Error for `path` in the cache that could not be created or written (errno `err`).
[[noreturn]] void cache_write_failed(const RepoCache& cache, const std::string& path, int err);
// Error when refs/<revision> cannot be kept as a file where it belongs: another ref, or a file,
// is in the way. Only looks (no write), so pull runs it before asking the Hub anything.
void check_ref_place(const RepoCache& cache, const std::string& revision);

}  // namespace attnsim::hub
