// hub.h: the order of resolution, and the offline rule.
#include <filesystem>

#include "cache.h"
#include "engine/error.h"
#include "hub.h"
#include "hub_env.h"
#include "model_files.h"

namespace attnsim::hub {

namespace {

Resolved found(const std::string& dir, Source source, const std::string& commit = "") {
  Resolved r;
  r.dir = dir;
  r.source = source;
  r.commit = commit;
  return r;
}

}  // namespace

Resolved resolve_model(const std::string& arg, const HubOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(arg, ec)) return found(arg, Source::Folder);
  const std::optional<RepoRef> ref = parse_repo_ref(arg);
  if (!ref) return found(arg, Source::Folder);
  const RepoCache cache = repo_cache(hub_env().cache, ref->repo);
  if (const auto commit = cached_commit(cache, ref->revision)) {
    const std::string dir = cache.snapshot(*commit);
    if (std::filesystem::is_directory(dir, ec) && snapshot_missing(dir).empty()) return found(dir, Source::Cache, *commit);
  }
  return pull_model(*ref, options);
}

}  // namespace attnsim::hub
