// Session: scenario state and the recompute worker. See session.h.
#include "views/session.h"

#include <algorithm>

#include "engine/blas_kernels.h"
#include "engine/error.h"
#include "engine/trace_json.h"

namespace attnsim::app {

std::string trace_json_text(const RunData& data) { return trace_to_json(data.config, data.run.trace).dump(); }

Session::~Session() {
  if (runner_.valid()) runner_.wait();
  if (warm_.valid()) warm_.wait();
}

void Session::load(const std::string& name) {
  scenario_ = find_scenario(name);
  edits_.clear();
  ++epoch_;
  request();
}

void Session::show(std::shared_ptr<RunData> data, const std::string& name,
                   const std::string& focus_step) {
  scenario_ = Scenario{};
  scenario_.name = name;
  scenario_.config = data->config;
  scenario_.focus_step = focus_step;
  edits_.clear();
  ++epoch_;
  pending_ = false;
  data->generation = ++generation_;
  data_ = std::move(data);
  error_.clear();
}

void Session::request() {
  if (worker_.valid()) {
    pending_ = true;  // the running job is stale; start again when it lands
    return;
  }
  launch();
}

void Session::launch() {
  pending_ = false;
  started_ = std::chrono::steady_clock::now();
  if (runner_.valid()) runner_.wait();  // the last job has delivered; it may still be waking the UI
  std::promise<Job> promise;
  worker_ = promise.get_future();
  // The worker gets copies: the UI may edit the scenario while it runs.
  // The run on screen: an edit that leaves the inputs and weights as they were (a mask, a bug)
  // takes its projections and head views instead of computing them again (forward's earlier).
  runner_ = start_task([s = scenario_, edits = edits_, backend = backend_, gen = ++generation_, epoch = epoch_,
                         kept = kept_, rate = sgemm_gflops_, on_ready = on_ready_, shown = data_,
                         promise = std::move(promise)]() mutable {
    Job job;
    job.epoch = epoch;
    try {
      auto data = std::make_shared<RunData>();
      data->generation = gen;
      data->config = s.config;
      Backend& engine = backend_by_name(backend);
      const auto t0 = std::chrono::steady_clock::now();
      data->run = forward(s.config, s.user_weights ? *s.user_weights : kept->weights(s.config),
                          kept->inputs(s.config, s, edits), engine,
                          shown ? &shown->run.trace : nullptr);
      if (s.has_reference) {
        data->reference = forward(s.reference, kept->weights(s.reference), kept->inputs(s.reference, s, edits),
                                  engine, shown && shown->has_reference ? &shown->reference.trace : nullptr);
        data->has_reference = true;
      }
      data->q_tokens = batch_tokens(s.sentences, s.config.batch, s.config.tq);
      data->k_tokens = batch_tokens(s.key_sentences.empty() || s.config.self_attention
                                        ? s.sentences
                                        : s.key_sentences,
                                    s.config.batch, s.config.tk);
      data->compute_ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
      job.data = std::move(data);
    } catch (const Error& e) {
      job.error = e.what();
    } catch (const std::exception& e) {
      job.error = std::string("internal error: ") + e.what();
    }
    promise.set_value(std::move(job));
    if (on_ready) on_ready();  // after the value is set, so the woken UI finds it ready
    // The sgemm rate for the status line, measured once, after the first run is delivered (it
    // held the first view back: 6 GFLOP, half a second in the page). The page, where this task
    // runs between two frames, measures a product an eighth the size (about 50 ms there).
    if (rate->load() == 0) rate->store(kTasksHaveThreads ? measure_sgemm_gflops() : measure_sgemm_gflops(256));
  });
}

bool Session::poll() {
  if (!worker_.valid() ||
      worker_.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    return false;
  Job job = worker_.get();
  const bool current = job.epoch == epoch_;  // not a run of a scenario left since
  if (current) error_ = job.error;
  const bool arrived = current && job.data != nullptr;
  if (arrived) data_ = std::move(job.data);
  // Off the UI thread the warm-up is free; on the page's main loop (no threads) it would stall
  // the frame after the first one with the run (about as long as the run's own allocations),
  // so there the first edit pays for its buffers instead.
  if (arrived && kTasksHaveThreads) warm_up(*data_);
  if (pending_) launch();
  return arrived;
}

void Session::warm_up(const RunData& data) {
  if (warmed_epoch_ == epoch_ || !warm_done_->load()) return;  // once per scenario, one at a time
  warmed_epoch_ = epoch_;
  std::vector<int64_t> sizes;  // every storage the run holds, once
  std::vector<const Storage*> seen;
  for (const Trace* t : {&data.run.trace, data.has_reference ? &data.reference.trace : nullptr}) {
    if (!t) continue;
    for (const Step& step : t->steps) {
      const Storage* st = step.out.defined() ? step.out.storage().get() : nullptr;
      if (!st || std::find(seen.begin(), seen.end(), st) != seen.end()) continue;
      seen.push_back(st);
      sizes.push_back(st->nbytes);
    }
  }
  if (warm_.valid()) warm_.wait();  // finished (warm_done_): returns at once
  warm_done_->store(false);
  warm_ = start_task([sizes = std::move(sizes), done = warm_done_] {
    prefault_buffers(sizes);
    done->store(true);
  });
}

void Session::wait_warm() {
  if (warm_.valid()) warm_.wait();
}

void Session::wait() {
  while (worker_.valid()) {
    runner_.wait();  // in the browser this is what runs the job
    poll();
  }
}

bool Session::wait_ready(double seconds) const {
  if (!kTasksHaveThreads && runner_.valid()) runner_.wait();
  return worker_.valid() &&
         worker_.wait_for(std::chrono::duration<double>(seconds)) == std::future_status::ready;
}

double Session::busy_seconds() const {
  if (!worker_.valid()) return 0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

}  // namespace attnsim::app
