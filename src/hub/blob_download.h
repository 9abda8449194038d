// One file of a model into the cache's blobs/, whole and verified or not at all:
//   1. blobs/<hash> already there at the Hub's size: nothing to fetch;
//   2. else GET the file, appending to blobs/<hash>.incomplete from the size it has (a Range
//      request, as huggingface_hub resumes); a 200 answer to a Range starts it over;
//   3. the bytes are hashed as they arrive (the part kept from before first); only when the
//      size and the hash match the Hub's model info is the file renamed to blobs/<hash>.
// Hostile answers are refused as they arrive: more bytes than the file's size, a
// Content-Length or Content-Range that disagrees with it, a commit, linked size or linked
// ETag (the Hub's headers before its redirect) other than the model info's. A hash mismatch
// or a body past the file's size removes the .incomplete (resuming it would repeat the
// mismatch); a cut, a stall, a request past its deadline (http.h) or a cancel keeps it for
// the next run. The file's size is bounded before this is called (download_plan.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "cache.h"
#include "hub_errors.h"
#include "model_info.h"

namespace attnsim::hub {

struct BlobJob {
  std::string file;    // "model.safetensors"
  std::string commit;  // what the URL names and X-Repo-Commit must say
  RemoteFile remote;
};

// `request` carries the URL, token, timeout and cancel flag (its offset is set here);
// `progress(file_done, received)` is called as bytes arrive: the file's bytes in hand, and
// those of them received in this call. Returns the bytes received over the network. Throws
// Error (one line, naming the file) on any failure.
int64_t fetch_blob(const RepoCache& cache, const BlobJob& job, HttpRequest request, const RequestContext& context,
                   const std::function<void(int64_t file_done, int64_t received)>& progress);

}  // namespace attnsim::hub
