#include "model_info.h"

#include <nlohmann/json.hpp>

#include "cache.h"
#include "engine/error.h"
#include "engine/nesting.h"

namespace attnsim::hub {

namespace {

constexpr int64_t kMaxFileBytes = int64_t{1} << 50;  // 1 PiB: no real file; sums stay far from 2^63
constexpr size_t kMaxSiblings = 1'000'000;

int64_t size_of(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number_integer())
    throw Error(where + ": \"" + key + "\" is missing or not a whole number");
  const auto v = j[key].is_number_unsigned() ? (j[key].get<uint64_t>() > uint64_t(kMaxFileBytes) ? -1 : j[key].get<int64_t>())
                                             : j[key].get<int64_t>();
  if (v < 0 || v > kMaxFileBytes) throw Error(where + ": \"" + key + "\" " + j[key].dump() + " is out of range (0 to 2^50)");
  return v;
}

std::string hex_of(const nlohmann::json& j, const char* key, size_t length, const std::string& where) {
  if (!j.contains(key) || !j[key].is_string() || !is_hex(j[key].get<std::string>(), length))
    throw Error(where + ": \"" + key + "\" is missing or not " + std::to_string(length) + " lowercase hex digits");
  return j[key].get<std::string>();
}

}  // namespace

ModelInfo parse_model_info(std::string_view text, const std::string& what) {
  const nlohmann::json j = parse_json(text, what);  // nesting bounded: a body of '[' is not a stack overflow
  if (!j.is_object()) throw Error(what + " is not a JSON object");
  ModelInfo info;
  info.commit = hex_of(j, "sha", 40, what);
  if (!j.contains("siblings") || !j["siblings"].is_array()) throw Error(what + ": no \"siblings\" list of files");
  if (j["siblings"].size() > kMaxSiblings) throw Error(what + ": more than a million files");
  for (const auto& s : j["siblings"]) {
    if (!s.is_object() || !s.contains("rfilename") || !s["rfilename"].is_string())
      throw Error(what + ": a sibling without an \"rfilename\"");
    const std::string name = s["rfilename"].get<std::string>();
    const std::string where = what + ", " + one_line(name);
    RemoteFile f;
    f.size = size_of(s, "size", where);
    if (s.contains("lfs") && !s["lfs"].is_null()) {
      const auto& lfs = s["lfs"];
      if (!lfs.is_object()) throw Error(where + ": \"lfs\" is not an object");
      f.lfs = true;
      f.hash = hex_of(lfs, "sha256", 64, where + " lfs");
      if (size_of(lfs, "size", where + " lfs") != f.size)
        throw Error(where + ": the LFS size " + lfs["size"].dump() + " differs from the file's size " + std::to_string(f.size));
    } else {
      f.hash = hex_of(s, "blobId", 40, where);
    }
    if (!info.files.emplace(name, f).second) throw Error(where + ": listed twice");
  }
  return info;
}

}  // namespace attnsim::hub
