#include "download_plan.h"

#include "cache.h"
#include "engine/cost.h"
#include "engine/error.h"

namespace attnsim::hub {

ModelFiles plan_download(const RepoRef& ref, const ModelInfo& info) {
  const std::string model = display_name(ref);
  if (is_commit_hash(ref.revision) && info.commit != ref.revision)
    throw Error(model + ": the Hub answered with commit " + info.commit + " for the pinned commit " + ref.revision +
                "; refused, nothing was written (a server that answers another commit does not serve this one: "
                "check HF_ENDPOINT)");
  const ModelFiles m = select_model_files([&](const std::string& f) { return info.files.count(f) > 0; });
  if (!m.missing.empty())
    throw Error(model + " at commit " + info.commit + " lacks " + m.missing + ": not a model attnsim opens");
  for (const std::string& f : m.files) {
    const int64_t size = info.files.at(f).size, most = max_file_bytes(f);
    if (most >= 0 && size > most)
      throw Error(model + ": the model info says " + f + " is " + std::to_string(size) + " bytes, over the " +
                  human_bytes(most) + " attnsim reads of it; refused before any byte of it");
  }
  return m;
}

void check_shards(const ModelInfo& info, const std::vector<std::string>& shards, const std::string& model) {
  for (const std::string& s : shards)
    if (!info.files.count(s))
      throw Error(model + ": " + kWeightsIndex + " names " + s + ", which the repository does not hold");
}

}  // namespace attnsim::hub
