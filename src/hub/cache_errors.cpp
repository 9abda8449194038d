#include "cache_errors.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/error.h"

namespace attnsim::hub {

namespace fs = std::filesystem;

namespace {

// The nearest of `path` and its parents that exists, when it is not a folder (a link to a
// folder counts as one): what stops `path` being made as a folder. "" when nothing does.
std::string in_the_way(const fs::path& path) {
  std::error_code ec;
  for (fs::path p = path; !p.empty(); p = p.parent_path()) {
    if (fs::exists(fs::symlink_status(p, ec))) return fs::is_directory(p, ec) ? "" : p.string();
    if (p == p.parent_path()) break;
  }
  return "";
}

bool within(const std::string& path, const std::string& dir) { return path == dir || path.rfind(dir + "/", 0) == 0; }

std::string where(const RepoCache& cache) { return "the Hugging Face cache " + one_line(cache.dir) + " (HF_HUB_CACHE)"; }

// `path` could not be made or written (errno `err`); `folder` (path or its parent) must be a folder.
[[noreturn]] void refuse(const RepoCache& cache, const std::string& path, const fs::path& folder, int err) {
  if (const std::string file = in_the_way(folder); !file.empty()) {
    if (!within(file, cache.root))  // the cache folder itself, or a folder above it
      throw Error(where(cache) + " cannot be a folder: " + one_line(file) +
                  " is a file; set HF_HUB_CACHE to a folder");
    throw Error(one_line(file) + " is a file where " + where(cache) + " needs a folder (a damaged cache): remove it and run again");
  }
  const std::string why = std::strerror(err);
  if (err == EACCES || err == EPERM || err == EROFS)
    throw Error("cannot write to " + where(cache) + ": " + one_line(path) + " (" + why +
                "); make it writable, or set HF_HUB_CACHE to a folder you can write");
  throw Error("cannot write " + one_line(path) + " in " + where(cache) + " (" + why + "): check the disk and HF_HUB_CACHE");
}

}  // namespace

void cache_write_failed(const RepoCache& cache, const std::string& path, int err) {
  refuse(cache, path, fs::path(path).parent_path(), err);
}

void make_cache_dir(const RepoCache& cache, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) refuse(cache, dir, dir, ec.value());
}

void check_ref_place(const RepoCache& cache, const std::string& revision) {
  const std::string refs = cache.root + "/refs", path = cache.ref(revision);
  std::error_code ec;
  if (fs::is_directory(path, ec))  // refs/main/ holds main/x's ref: main's cannot be a file there
    throw Error(where(cache) + " keeps " + one_line(path) + " as a folder (of refs such as " + revision +
                "/...), where the ref of " + revision + " must be a file: git allows no branch " + revision +
                " beside those; remove that folder if they are gone from the Hub, or ask for another revision");
  const std::string file = in_the_way(fs::path(path).parent_path());
  if (file.empty()) return;
  if (file.size() <= refs.size() || !within(file, refs)) cache_write_failed(cache, path, ENOTDIR);  // not a ref: the cache is
  const std::string other = file.substr(refs.size() + 1);
  throw Error(where(cache) + " keeps " + one_line(file) + " as the ref of " + other + ", where the revision " + revision +
              " needs a folder: git allows no branch " + revision + " beside " + other + "; remove that file if " + other +
              " is gone from the Hub, or ask for another revision");
}

}  // namespace attnsim::hub
