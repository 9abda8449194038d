// The browser side of hub_download.h: the job's state lives here, hub_web.js does the
// fetching and storing and reports back through the exported functions below (one job at a
// time; the page has one thread). The decisions stay in C++, shared with the desktop: a
// name's rules (repo_name.h), which files a model needs (model_files.h), the model info's
// checks (model_info.h) and the memory prediction before any weight byte (hf_model.h).
#include <emscripten.h>
#include <emscripten/heap.h>
#include <malloc.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "app/hub_download.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/nesting.h"
#include "hub/download_plan.h"
#include "hub/hub_errors.h"
#include "hub/model_files.h"
#include "hub/model_info.h"
#include "hub/repo_name.h"
#include "hub/url_text.h"
#include "model/formats/hf_config.h"
#include "model/formats/hf_model.h"
#include "views/i18n.h"

namespace attnsim::app {

namespace {

struct Web {
  HubJob job;
  std::vector<StoredModel> stored;
};

Web& web() {
  static Web* w = new Web;  // lives as long as the page
  return *w;
}

// The text an exported function returns: valid until the next call (JS copies it at once).
const char* answer(const nlohmann::json& j) {
  static std::string text;
  text = j.dump();
  return text.c_str();
}

const char* refusal(const std::exception& e) { return answer({{"error", one_line(e.what())}}); }

nlohmann::json remote_json(const std::string& name, const hub::RemoteFile& f) {
  return {{"name", name}, {"size", f.size}, {"hash", f.hash}, {"lfs", f.lfs}};
}

}  // namespace

void hub_start(const std::string& name, const std::string& token) {
  Web& w = web();
  if (w.job.state == HubJob::State::Running) return;
  w.job = HubJob{};
  w.job.state = HubJob::State::Running;
  w.job.name = name;
  EM_ASM({ attnsimHub.start(UTF8ToString($0), UTF8ToString($1)); }, name.c_str(), token.c_str());
}

void hub_cancel() { EM_ASM({ attnsimHub.cancel(); }); }
HubJob hub_job() { return web().job; }

void hub_job_taken() {
  if (web().job.state != HubJob::State::Running) web().job = HubJob{};
}

void hub_refresh_stored() { EM_ASM({ attnsimHub.list(); }); }
std::vector<StoredModel> hub_stored() { return web().stored; }
void hub_delete_stored(const StoredModel& model) { EM_ASM({ attnsimHub.remove(UTF8ToString($0)); }, model.name.c_str()); }
std::string hub_store_where() { return tr("this browser's storage (IndexedDB)"); }
bool hub_can_remember_token() { return true; }

void hub_remember_token(const std::string& token) {
  EM_ASM(
      {
        try {
          var t = UTF8ToString($0);
          if (t) localStorage.setItem("attnsim-hub-token", t);
          else localStorage.removeItem("attnsim-hub-token");
        } catch (e) {}
      },
      token.c_str());
}

std::string hub_remembered_token() {
  char* t = reinterpret_cast<char*>(static_cast<intptr_t>(EM_ASM_INT({
    var t = null;
    try { t = localStorage.getItem("attnsim-hub-token"); } catch (e) {}
    return t ? allocateUTF8(t) : 0;
  })));
  std::string s = t ? t : "";
  std::free(t);
  return s;
}

}  // namespace attnsim::app

using namespace attnsim;
using namespace attnsim::app;

extern "C" {

// {"name": "ORG/NAME[@REV]", "repo", "revision"} or {"error"}.
EMSCRIPTEN_KEEPALIVE const char* attnsim_hub_parse(const char* text) {
  try {
    const auto ref = hub::parse_repo_ref(text);
    if (!ref) throw Error(std::string("'") + one_line(text) + "' is not a model's name on the Hub (ORG/NAME, e.g. openai-community/gpt2)");
    return answer({{"name", hub::display_name(*ref)}, {"repo", ref->repo}, {"revision", ref->revision}});
  } catch (const std::exception& e) {
    return refusal(e);
  }
}

// From the model info: {"commit", "files": [config, tokenizer files, the index when sharded],
// "weights": [model.safetensors] or [] when sharded, "sharded"} or {"error"}.
EMSCRIPTEN_KEEPALIVE const char* attnsim_hub_plan(const char* name, const char* info_json) {
  try {
    const hub::ModelInfo info = hub::parse_model_info(info_json, std::string(name) + "'s model info");
    const auto ref = hub::parse_repo_ref(name);  // the script's own attnsim_hub_parse name
    if (!ref) throw Error(std::string("'") + one_line(name) + "' is not a model's name on the Hub");
    const hub::ModelFiles wanted = hub::plan_download(*ref, info);
    nlohmann::json files = nlohmann::json::array(), weights = nlohmann::json::array();
    for (const std::string& f : wanted.files)
      (f == hub::kWeights ? weights : files).push_back(remote_json(f, info.files.at(f)));
    return answer({{"commit", info.commit}, {"files", files}, {"weights", weights}, {"sharded", wanted.sharded}});
  } catch (const std::exception& e) {
    return refusal(e);
  }
}

// The shards model.safetensors.index.json names, each from the model info: {"weights"} or {"error"}.
EMSCRIPTEN_KEEPALIVE const char* attnsim_hub_shards(const char* name, const char* index_text, const char* info_json) {
  try {
    const hub::ModelInfo info = hub::parse_model_info(info_json, std::string(name) + "'s model info");
    nlohmann::json weights = nlohmann::json::array();
    const std::vector<std::string> shards = hub::shard_names(index_text, std::string(name) + "'s " + hub::kWeightsIndex);
    hub::check_shards(info, shards, name);
    for (const std::string& s : shards) weights.push_back(remote_json(s, info.files.at(s)));
    return answer({{"weights", weights}});
  } catch (const std::exception& e) {
    return refusal(e);
  }
}

// The one line for an HTTP status the Hub answered, in the desktop's words (hub_errors.h).
EMSCRIPTEN_KEEPALIVE const char* attnsim_hub_status_error(const char* name, const char* what, const char* endpoint,
                                                          int status, int token) {
  try {
    hub::status_error(status, hub::RequestContext{name, what, endpoint, 30, token != 0});
  } catch (const std::exception& e) {
    static std::string text;
    text = one_line(e.what());
    return text.c_str();
  }
}

// The Hub's address as the page may print it: without a user or password (hub/url_text.h).
EMSCRIPTEN_KEEPALIVE const char* attnsim_hub_shown_url(const char* url) {
  static std::string text;
  text = hub::without_credentials(url);
  return text.c_str();
}

// "" when the model fits in what the page can still take, else the refusal with the figures.
// The page holds a model twice: its files in the page's memory, and the model read from them.
EMSCRIPTEN_KEEPALIVE const char* attnsim_hub_check(const char* name, const char* config_json, double weight_bytes) {
  try {
    const auto bytes = static_cast<int64_t>(weight_bytes);
    const std::string what = std::string(name) + " config.json";
    const model::hf::HfConfig config = model::hf::parse_hf_config(parse_json(config_json, what), what);
    const int64_t need = model::hf::predict_hf_model_bytes(config, bytes) + bytes;
    const int64_t max = static_cast<int64_t>(emscripten_get_heap_max());
    const int64_t in_use = static_cast<int64_t>(mallinfo().uordblks);
    if (need > max - in_use)
      throw Error(std::string(name) + " needs about " + human_bytes(need) + " in this page (" + human_bytes(bytes) +
                  " of weights, kept as files and read as float32), over the " + human_bytes(max - in_use) +
                  " it can still take (the page's limit is " + human_bytes(max) +
                  "); nothing of the weights was downloaded: use the desktop app for this model");
    return "";
  } catch (const std::exception& e) {
    static std::string text;
    text = one_line(e.what());
    return text.c_str();
  }
}

EMSCRIPTEN_KEEPALIVE void attnsim_hub_progress(const char* file, double done, double total, double fetched, double seconds,
                                               int verifying) {
  HubJob& j = web().job;
  j.file = file;
  j.verifying = verifying != 0;
  j.done = static_cast<int64_t>(done);
  j.total = static_cast<int64_t>(total);
  j.fetched = static_cast<int64_t>(fetched);
  j.seconds = seconds;
}

EMSCRIPTEN_KEEPALIVE void attnsim_hub_finished(const char* dir, const char* error, int from_store, double fetched,
                                               double seconds) {
  HubJob& j = web().job;
  j.file.clear();
  j.dir = dir;
  j.error = error;
  j.from_store = from_store != 0;
  j.fetched = static_cast<int64_t>(fetched);
  j.seconds = seconds;
  j.state = j.error.empty() ? HubJob::State::Done : HubJob::State::Failed;
}

// [{"name", "commit", "bytes"}, ...]
EMSCRIPTEN_KEEPALIVE void attnsim_hub_stored(const char* rows_json) {
  std::vector<StoredModel> list;
  try {
    for (const auto& r : nlohmann::json::parse(rows_json))
      list.push_back({r.at("name").get<std::string>(), r.at("commit").get<std::string>(), r.at("bytes").get<int64_t>()});
  } catch (const std::exception&) {
    return;  // our own script's list: cannot be malformed unless the storage was tampered with
  }
  web().stored = std::move(list);
}

}  // extern "C"
