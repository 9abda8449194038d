// hub.h's pull_model: the model info, then the files in order, then the snapshot and the ref.
#include <chrono>
#include <filesystem>

#include "blob_download.h"
#include "cache.h"
#include "cache_errors.h"
#include "download_plan.h"
#include "engine/checked.h"
#include "engine/error.h"
#include "engine/read_file.h"
#include "hub.h"
#include "hub_env.h"
#include "model_files.h"
#include "model_info.h"

namespace attnsim::hub {

namespace {

constexpr int64_t kMaxModelInfoBytes = 32 << 20;  // a repository of ~100,000 files

// quote(revision, safe=""): '/' in refs/pr/1 is the only character of a checked revision
// that needs it.
std::string url_revision(const std::string& revision) {
  std::string s;
  for (const char c : revision) s += c == '/' ? std::string("%2F") : std::string(1, c);
  return s;
}

// What one run shares between its steps.
struct Run {
  RepoRef ref;
  HubEnv env;
  RepoCache cache;
  RequestContext context;
  const HubOptions& options;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  int64_t done = 0, total = 0, fetched = 0;

  HttpRequest request(const std::string& url) const { return HttpRequest{url, env.token, env.timeout_s, 0, options.cancel}; }
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
};

ModelInfo fetch_model_info(Run& run) {
  const std::string url = run.env.endpoint + "/api/models/" + run.ref.repo + "/revision/" + url_revision(run.ref.revision) + "?blobs=true";
  std::string body, refusal;
  const Sink sink = [&](const HttpResponse&, const char* p, size_t n) {
    if (static_cast<int64_t>(body.size() + n) > kMaxModelInfoBytes) {
      refusal = "the model info is over " + std::to_string(kMaxModelInfoBytes >> 20) + " MiB";
      return false;
    }
    body.append(p, n);
    return true;
  };
  RequestContext c = run.context;
  c.what = kModelInfo;
  const HttpResult r = http_get(run.request(url), sink);
  if (r.outcome == Outcome::SinkStopped) throw Error(c.model + ": " + refusal);
  check_response(r, c);
  return parse_model_info(body, run.context.model + "'s model info");
}

void fetch(Run& run, const ModelInfo& info, const std::string& file) {
  const RemoteFile& remote = info.files.at(file);
  const std::string url = run.env.endpoint + "/" + run.ref.repo + "/resolve/" + info.commit + "/" + file;
  const BlobJob job{file, info.commit, remote};
  const auto progress = [&](int64_t file_done, int64_t received) {
    if (!run.options.progress) return;
    run.options.progress(
        Progress{file, file_done, remote.size, run.done + file_done, run.total, run.fetched + received, run.seconds()});
  };
  const int64_t received = fetch_blob(run.cache, job, run.request(url), run.context, progress);
  run.fetched += received;
  run.done += remote.size;
}

[[noreturn]] void refuse_offline(const Run& run, const std::string& why) {
  throw Error(run.context.model + " " + why + " in the Hugging Face cache (" + run.env.cache +
              ") and HF_HUB_OFFLINE=1 forbids downloading it: run `attnsim-cli pull " + run.context.model +
              "` with the network first");
}

}  // namespace

Resolved pull_model(const RepoRef& ref, const HubOptions& options) {
  HubEnv env = hub_env();
  if (!options.token.empty()) {
    check_token(options.token, "the token");
    env.token = options.token;
  }
  Run run{ref, env, repo_cache(env.cache, ref.repo), RequestContext{display_name(ref), "", env.endpoint, env.timeout_s, !env.token.empty()},
          options};
  check_ref_place(run.cache, ref.revision);  // before the Hub is asked: a ref in the way is refused at once
  if (env.offline) {
    const auto commit = cached_commit(run.cache, ref.revision);
    if (!commit) refuse_offline(run, "is not");
    const std::string dir = run.cache.snapshot(*commit), missing = snapshot_missing(dir);
    if (!missing.empty()) refuse_offline(run, "lacks " + missing);
    Resolved r;
    r.dir = dir;
    r.source = Source::Cache;
    r.commit = *commit;
    return r;
  }

  // 1. what the revision is now, and its files (download_plan.h: refused here, before any byte)
  const ModelInfo info = fetch_model_info(run);
  const ModelFiles wanted = plan_download(ref, info);
  std::vector<std::string> small = wanted.files, weights;
  if (!wanted.sharded) {
    small.pop_back();  // select_model_files puts the weights last
    weights.push_back(kWeights);
  }
  for (const std::string& f : wanted.files) run.total = checked_add(run.total, info.files.at(f).size, "the model's bytes");

  // 2. config, tokenizer, index: small files, the sizes of the shards from the index
  for (const std::string& f : small) fetch(run, info, f);
  if (wanted.sharded) {
    weights = read_shard_names(run.cache.blob(info.files.at(kWeightsIndex).hash));
    check_shards(info, weights, run.context.model);
    for (const std::string& s : weights) run.total = checked_add(run.total, info.files.at(s).size, "the model's bytes");
  }
  int64_t weight_bytes = 0;
  for (const std::string& w : weights) weight_bytes = checked_add(weight_bytes, info.files.at(w).size, "the weights' bytes");

  // 3. the caller's word before any weight byte
  if (options.check_weights)
    options.check_weights(read_text_file(run.cache.blob(info.files.at(kConfig).hash), max_file_bytes(kConfig)), weight_bytes);
  for (const std::string& w : weights) fetch(run, info, w);

  // 4. every file verified in blobs/: the snapshot, then the ref
  std::vector<std::string> all = small;
  all.insert(all.end(), weights.begin(), weights.end());
  for (const std::string& f : all) link_snapshot_file(run.cache, info.commit, f, info.files.at(f).hash);
  write_ref(run.cache, ref.revision, info.commit);
  Resolved r;
  r.dir = run.cache.snapshot(info.commit);
  r.source = Source::Hub;
  r.commit = info.commit;
  r.files = static_cast<int>(all.size());
  r.bytes = run.total;
  r.fetched = run.fetched;
  r.seconds = run.seconds();
  return r;
}

}  // namespace attnsim::hub
