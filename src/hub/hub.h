// Model names -> folders: what the CLI and the app call. A name is ORG/NAME[@REVISION]
// (repo_name.h); the environment (hub_env.h) says where the cache is, which Hub, which token
// and whether the network may be used.
//
//   resolve_model("openai-community/gpt2", options)
//     1. a local folder of that name: that folder, untouched;
//     2. the cache: refs/REV -> snapshots/COMMIT/ with config.json, the weights and the
//        tokenizer if the model has one (model_files.h): that snapshot, no network;
//     3. else pull_model, unless HF_HUB_OFFLINE=1 (refused in one line).
//   pull_model(ref, options)
//     asks the Hub (model info: commit, files, sizes, hashes), refuses what download_plan.h
//     refuses (another commit than a pinned one, a small file over its cap), fetches what
//     blobs/ lacks in the order config.json, tokenizer files, the index, then (after
//     check_weights) the weights; links every file into snapshots/COMMIT/ only when all are
//     verified, then writes refs/REV. Offline it succeeds only when the cache holds the model
//     whole. Every request has a deadline (http.h); the cache's errors are cache_errors.h's.
// Every failure is an Error of one line; the app and the CLI show it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "repo_name.h"

namespace attnsim::hub {

struct Progress {
  std::string file;                  // the file being fetched
  int64_t file_done = 0, file_size = 0;
  int64_t done = 0, total = 0;       // bytes of all the model's files: in the cache or received
  int64_t fetched = 0;               // bytes received over the network in this run
  double seconds = 0;                // since the run started; rate = fetched / seconds
};

struct HubOptions {
  // Called with config.json's text and the weight files' total size before any weight byte
  // is fetched; throws Error to refuse (the memory the model would need, a config attnsim
  // cannot run). The hub knows no model internals: the caller predicts.
  std::function<void(const std::string& config_json, int64_t weight_bytes)> check_weights;
  // As bytes arrive (throwing stops the download and the exception comes out of the call).
  std::function<void(const Progress&)> progress;
  const std::atomic<bool>* cancel = nullptr;      // set from another thread: Error "cancelled"
  // A token typed into the app for this run only; empty: HF_TOKEN's. Never printed or stored.
  std::string token;
};

enum class Source { Folder, Cache, Hub };

struct Resolved {
  std::string dir;     // the folder to open
  Source source = Source::Folder;
  std::string commit;  // Cache, Hub
  int files = 0;       // Hub: the model's files
  int64_t bytes = 0;   // Hub: their total size
  int64_t fetched = 0; // Hub: bytes received in this run
  double seconds = 0;  // Hub: the run's time
};

// `arg` that is no folder and has no name's shape comes back unchanged (Source::Folder): the
// caller's own "no such folder" follows.
Resolved resolve_model(const std::string& arg, const HubOptions& options);
Resolved pull_model(const RepoRef& ref, const HubOptions& options);

}  // namespace attnsim::hub
