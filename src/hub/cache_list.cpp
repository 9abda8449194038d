#include "cache_list.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "cache.h"
#include "cache_errors.h"
#include "engine/error.h"
#include "model_files.h"
#include "repo_name.h"

namespace attnsim::hub {

namespace fs = std::filesystem;

namespace {

// models--ORG--NAME -> "ORG/NAME", "" for any other folder (datasets--, .locks, a stray file).
std::string repo_of_folder(const std::string& folder) {
  const std::string prefix = "models--";
  if (folder.rfind(prefix, 0) != 0) return "";
  const std::string rest = folder.substr(prefix.size());
  const size_t sep = rest.find("--");
  if (sep == std::string::npos) return "";
  const std::string repo = rest.substr(0, sep) + "/" + rest.substr(sep + 2);
  try {
    const auto ref = parse_repo_ref(repo);
    return ref && ref->repo == repo ? repo : "";
  } catch (const Error&) {
    return "";
  }
}

int64_t snapshot_bytes(const std::string& dir) {
  std::set<fs::path> blobs;  // two names for one blob count once
  int64_t bytes = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const fs::path target = fs::weakly_canonical(e.path(), ec);
    if (ec || !blobs.insert(target).second) continue;
    const auto size = fs::file_size(target, ec);
    if (!ec) bytes += static_cast<int64_t>(size);
  }
  return bytes;
}

}  // namespace

std::vector<CachedModel> list_cached_models(const std::string& cache_dir) {
  std::vector<CachedModel> out;
  std::error_code ec;
  for (const auto& repo_dir : fs::directory_iterator(cache_dir, ec)) {
    const std::string repo = repo_of_folder(repo_dir.path().filename().string());
    if (repo.empty()) continue;
    const RepoCache cache = repo_cache(cache_dir, repo);
    for (auto it = fs::recursive_directory_iterator(cache.root + "/refs", ec); !ec && it != fs::end(it); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const std::string revision = fs::relative(it->path(), cache.root + "/refs", ec).string();
      try {
        const auto commit = cached_commit(cache, revision);
        const std::string dir = cache.snapshot(*commit);
        if (!fs::is_directory(dir, ec) || !snapshot_missing(dir).empty()) continue;
        out.push_back({repo, revision, *commit, dir, snapshot_bytes(dir)});
      } catch (const Error&) {
        continue;  // a damaged ref: resolve_model says so when the model is asked for
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const CachedModel& a, const CachedModel& b) {
    return a.repo != b.repo ? a.repo < b.repo : a.revision < b.revision;
  });
  return out;
}

void delete_cached_model(const std::string& cache_dir, const std::string& repo) {
  const RepoCache cache = repo_cache(cache_dir, repo);
  std::error_code ec;
  fs::remove_all(cache.root, ec);
  if (ec) cache_write_failed(cache, cache.root, ec.value());
  fs::remove_all(cache_dir + "/.locks/" + cache.folder, ec);  // empty lock files; harmless if left
}

}  // namespace attnsim::hub
