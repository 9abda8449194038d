// One repository's folder in the Hugging Face cache, laid out as huggingface_hub lays it out,
// so that a model `transformers` fetched opens here with no download and what attnsim fetches
// is found by Python:
//   CACHE/models--ORG--NAME/
//     blobs/<hash>              a file's bytes, whole and verified; <hash> is the LFS sha256
//                               (64 hex) or, for a small file kept in git, its git blob sha1
//     blobs/<hash>.incomplete   a download in progress, resumed from its size
//     refs/<revision>           the commit the revision named when last asked (40 hex, no newline)
//     snapshots/<commit>/<file> a relative symlink: ../../blobs/<hash>
//   CACHE/.locks/models--ORG--NAME/<hash>.lock
//                               held (flock) while a blob is fetched: huggingface_hub's
//                               filelock takes the same lock, so attnsim and Python never
//                               append to one .incomplete at once
// The order of writing keeps the cache honest: a blob enters blobs/ only verified (rename from
// .incomplete), a snapshot link is made only to such a blob, and refs/ is written last.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace attnsim::hub {

struct RepoCache {
  std::string dir;     // CACHE
  std::string folder;  // models--ORG--NAME
  std::string root;    // CACHE/models--ORG--NAME

  std::string blob(const std::string& hash) const { return root + "/blobs/" + hash; }
  std::string incomplete(const std::string& hash) const { return blob(hash) + ".incomplete"; }
  std::string snapshot(const std::string& commit) const { return root + "/snapshots/" + commit; }
  std::string ref(const std::string& revision) const { return root + "/refs/" + revision; }
  std::string lock(const std::string& hash) const { return dir + "/.locks/" + folder + "/" + hash + ".lock"; }
};

// `repo` is a checked "ORG/NAME" (repo_name.h).
RepoCache repo_cache(const std::string& cache_dir, const std::string& repo);

bool is_hex(std::string_view s, size_t length);  // exactly `length` lowercase hex digits
inline bool is_commit_hash(std::string_view s) { return is_hex(s, 40); }

// The revision itself when it is a commit hash (refs/ is not read: a commit is a promise), else
// the commit refs/<revision> holds; nullopt when the cache has no such ref. Error when the ref
// file holds anything but a commit hash, or another ref is in its place (cache_errors.h).
std::optional<std::string> cached_commit(const RepoCache& cache, const std::string& revision);
// refs/<revision> = commit (atomically); nothing for a revision that is itself the commit, or
// a ref that already holds it. Errors are cache_errors.h's.
void write_ref(const RepoCache& cache, const std::string& revision, const std::string& commit);
// snapshots/<commit>/<file> -> ../../blobs/<hash>, made beside it and renamed over whatever
// link was there (a reader never sees the name missing or half-made).
void link_snapshot_file(const RepoCache& cache, const std::string& commit, const std::string& file, const std::string& hash);

}  // namespace attnsim::hub
