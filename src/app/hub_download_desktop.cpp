// The desktop side of hub_download.h: hub::resolve_model on a worker thread, its progress
// copied under a lock for the window to read each frame; Cancel sets the flag libcurl's tick
// checks, so a cancelled download keeps its .incomplete and the next run resumes it.
#include <atomic>
#include <mutex>
#include <thread>

#include "app/hub_download.h"
#include "engine/error.h"
#include "hub/cache_list.h"
#include "hub/hub.h"
#include "hub/hub_env.h"
#include "model/formats/hf_model.h"
#include "views/i18n.h"

namespace attnsim::app {

namespace {

struct Desktop {
  std::mutex lock;
  HubJob job;
  std::atomic<bool> cancel{false};
  std::thread worker;
  std::vector<StoredModel> stored;

  ~Desktop() {  // the app quits while a download runs: stop it, keep what it has
    cancel = true;
    if (worker.joinable()) worker.join();
  }
};

Desktop& desktop() {
  static Desktop d;
  return d;
}

void run_job(const std::string& name, const std::string& token) {
  Desktop& d = desktop();
  hub::HubOptions options;
  options.token = token;
  options.cancel = &d.cancel;
  options.check_weights = [name](const std::string& config_json, int64_t weight_bytes) {
    model::hf::check_hf_download(name, config_json, weight_bytes, 0);
  };
  options.progress = [&d](const hub::Progress& p) {
    std::lock_guard<std::mutex> g(d.lock);
    d.job.file = p.file;
    d.job.done = p.done;
    d.job.total = p.total;
    d.job.fetched = p.fetched;
    d.job.seconds = p.seconds;
  };
  try {
    const hub::Resolved r = hub::resolve_model(name, options);
    std::lock_guard<std::mutex> g(d.lock);
    d.job.dir = r.dir;
    d.job.from_store = r.source != hub::Source::Hub;
    d.job.file.clear();
    d.job.state = HubJob::State::Done;
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> g(d.lock);
    d.job.error = one_line(e.what());
    d.job.state = HubJob::State::Failed;
  }
}

}  // namespace

void hub_start(const std::string& name, const std::string& token) {
  Desktop& d = desktop();
  {
    std::lock_guard<std::mutex> g(d.lock);
    if (d.job.state == HubJob::State::Running) return;
    d.job = HubJob{};
    d.job.state = HubJob::State::Running;
    d.job.name = name;
  }
  if (d.worker.joinable()) d.worker.join();  // the last job's thread, already finished
  d.cancel = false;
  d.worker = std::thread(run_job, name, token);
}

void hub_cancel() { desktop().cancel = true; }

HubJob hub_job() {
  Desktop& d = desktop();
  std::lock_guard<std::mutex> g(d.lock);
  return d.job;
}

void hub_job_taken() {
  Desktop& d = desktop();
  std::lock_guard<std::mutex> g(d.lock);
  if (d.job.state != HubJob::State::Running) d.job = HubJob{};
}

void hub_refresh_stored() {
  Desktop& d = desktop();
  std::vector<StoredModel> list;
  try {
    for (const auto& m : hub::list_cached_models(hub::hub_env().cache))
      list.push_back({m.revision == "main" ? m.repo : m.repo + "@" + m.revision, m.commit, m.bytes});
  } catch (const Error&) {
    // no cache folder can be named (no HOME): nothing stored
  }
  std::lock_guard<std::mutex> g(d.lock);
  d.stored = std::move(list);
}

std::vector<StoredModel> hub_stored() {
  Desktop& d = desktop();
  std::lock_guard<std::mutex> g(d.lock);
  return d.stored;
}

void hub_delete_stored(const StoredModel& model) {
  const std::string repo = model.name.substr(0, model.name.find('@'));
  hub::delete_cached_model(hub::hub_env().cache, repo);
  hub_refresh_stored();
}

std::string hub_store_where() {
  try {
    return trf("the Hugging Face cache, shared with Python: %s", hub::hub_env().cache.c_str());
  } catch (const Error& e) {
    return e.what();
  }
}

bool hub_can_remember_token() { return false; }
void hub_remember_token(const std::string&) {}
std::string hub_remembered_token() { return ""; }

}  // namespace attnsim::app
