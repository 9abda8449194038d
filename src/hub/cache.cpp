#include "cache.h"

#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "cache_errors.h"
#include "engine/atomic_file.h"
#include "engine/error.h"
#include "engine/read_file.h"

namespace attnsim::hub {

namespace fs = std::filesystem;

RepoCache repo_cache(const std::string& cache_dir, const std::string& repo) {
  std::string folder = "models--" + repo;
  folder.replace(folder.find('/'), 1, "--");  // huggingface_hub's repo_folder_name
  return RepoCache{cache_dir, folder, cache_dir + "/" + folder};
}

bool is_hex(std::string_view s, size_t length) {
  if (s.size() != length) return false;
  for (const char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::optional<std::string> cached_commit(const RepoCache& cache, const std::string& revision) {
  if (is_commit_hash(revision)) return revision;  // a commit names itself, whatever refs/ holds (as in huggingface_hub)
  check_ref_place(cache, revision);
  const std::string path = cache.ref(revision);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  std::string commit = read_text_file(path, 256);
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r' || commit.back() == ' ')) commit.pop_back();
  if (!is_commit_hash(commit)) throw Error(path + ": not a commit hash (a damaged cache: remove the file and pull again)");
  return commit;
}

void write_ref(const RepoCache& cache, const std::string& revision, const std::string& commit) {
  if (revision == commit) return;
  check_ref_place(cache, revision);
  const auto holds = [&] {
    try {
      return cached_commit(cache, revision) == commit;
    } catch (const Error&) {
      return false;  // a damaged ref: replaced
    }
  };
  if (holds()) return;  // nothing to write: a read-only cache that holds the model will do
  const std::string path = cache.ref(revision), parent = fs::path(path).parent_path().string();
  make_cache_dir(cache, parent);  // refs/pr/ for refs/pr/1
  if (::access(parent.c_str(), W_OK) != 0) cache_write_failed(cache, path, errno);
  write_file_atomically(path, commit);
}

void link_snapshot_file(const RepoCache& cache, const std::string& commit, const std::string& file, const std::string& hash) {
  const std::string dir = cache.snapshot(commit), path = dir + "/" + file;
  const std::string target = "../../blobs/" + hash;  // `file` has no '/': the snapshot's top level
  std::error_code ec;
  if (fs::is_symlink(path, ec) && fs::read_symlink(path, ec) == target) return;
  make_cache_dir(cache, dir);
  const std::string tmp = dir + "/." + file + ".link" + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  if (::symlink(target.c_str(), tmp.c_str()) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    cache_write_failed(cache, path, err);
  }
}

}  // namespace attnsim::hub
