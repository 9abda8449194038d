// The Hub's model info (GET /api/models/ORG/NAME/revision/REV?blobs=true), reduced to what a
// download needs. Its shape:
//   {"id": "ORG/NAME", "sha": "<40-hex commit>",
//    "siblings": [{"rfilename": "config.json", "size": 665, "blobId": "<40-hex git sha1>"},
//                 {"rfilename": "model.safetensors", "size": 548105171, "blobId": "...",
//                  "lfs": {"sha256": "<64 hex>", "size": 548105171, "pointerSize": 135}}, ...]}
// Everything in it comes from outside: the commit and hashes must be hex of the right length
// (they become file names), sizes whole numbers from 0 to 2^50 that agree with each other.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace attnsim::hub {

struct RemoteFile {
  int64_t size = 0;
  bool lfs = false;
  std::string hash;  // the blob's name in the cache: the LFS sha256, else the git blob sha1
};

struct ModelInfo {
  std::string commit;
  std::map<std::string, RemoteFile> files;  // by rfilename
};

// `what` names the source in errors ("ORG/NAME's model info").
ModelInfo parse_model_info(std::string_view json, const std::string& what);

}  // namespace attnsim::hub
