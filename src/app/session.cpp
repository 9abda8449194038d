// Session: scenario state and the recompute worker. See session.h.
#include "app/session.h"

#include "engine/error.h"

namespace attnsim::app {

void Session::load(const std::string& name) {
  scenario_ = find_scenario(name);
  edits_.clear();
  ++epoch_;
  request();
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
  // The worker gets copies: the UI may edit the scenario while it runs.
  worker_ = std::async(std::launch::async, [s = scenario_, edits = edits_, backend = backend_,
                                            gen = ++generation_, epoch = epoch_]() -> Job {
    Job job;
    job.epoch = epoch;
    try {
      auto data = std::make_shared<RunData>();
      data->generation = gen;
      data->config = s.config;
      const auto t0 = std::chrono::steady_clock::now();
      const MhaInputs inputs =
          scenario_inputs(s.config, s.sentences, s.key_sentences, s.input_scale, edits);
      const MhaWeights weights = init_weights(s.config.d_model, s.config.bias, s.config.seed);
      Backend& engine = backend_by_name(backend);
      data->run = forward(s.config, weights, inputs, engine);
      if (s.has_reference) {
        const MhaInputs ref_inputs =
            scenario_inputs(s.reference, s.sentences, s.key_sentences, s.input_scale, edits);
        const MhaWeights ref_weights =
            init_weights(s.reference.d_model, s.reference.bias, s.reference.seed);
        data->reference = forward(s.reference, ref_weights, ref_inputs, engine);
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
    return job;
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
  if (pending_) launch();
  return arrived;
}

void Session::wait() {
  while (worker_.valid()) {
    worker_.wait();
    poll();
  }
}

double Session::busy_seconds() const {
  if (!worker_.valid()) return 0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

}  // namespace attnsim::app
