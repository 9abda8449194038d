// Session: what the app is showing (an editable copy of a scenario) and the forward passes
// computed from it. Recomputing runs as a task (tasks.h: a worker thread on the desktop,
// between two frames in the browser) so the window never freezes; the UI keeps drawing the
// last finished run until the new one is swapped in.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "views/run_inputs.h"
#include "engine/mha.h"
#include "engine/scenario.h"
#include "views/tasks.h"

namespace attnsim::app {

// One finished computation: the run, and for bug-lab scenarios the correct run beside it.
struct RunData {
  uint64_t generation = 0;
  MhaConfig config;
  std::vector<std::vector<std::string>> q_tokens;  // [batch][Tq]
  std::vector<std::vector<std::string>> k_tokens;  // [batch][Tk]
  ForwardResult run;
  bool has_reference = false;
  ForwardResult reference;
  double compute_ms = 0;
};

// The run's trace as one line of JSON, in the format of `attnsim-cli trace --json`
// (engine/trace_json.h): what --print-trace prints and the page logs with &log=trace.
std::string trace_json_text(const RunData& data);

class Session {
 public:
  Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();
  // Loads a scenario by name (throws Error for an unknown one) and computes it.
  void load(const std::string& name);
  // Shows a run computed elsewhere (a layer of the trained model, model_view.h) as the
  // scenario `name`; a recompute still running for the previous scenario is dropped.
  void show(std::shared_ptr<RunData> data, const std::string& name, const std::string& focus_step);
  // The editable copy: change it, then call request().
  Scenario& scenario() { return scenario_; }
  const Scenario& scenario() const { return scenario_; }
  CellEdits& edits() { return edits_; }
  // "cpu" or "cuda" (attnsim::backend_by_name); applies from the next request().
  const std::string& backend() const { return backend_; }
  void set_backend(const std::string& name) { backend_ = name; }

  // Starts a recompute of the current settings (coalesced while one is running).
  void request();
  // Swaps in a finished run; true when something new arrived. Call once per frame.
  bool poll();
  // Blocks until no work is pending (headless modes).
  void wait();
  // Blocks up to `seconds` for the running job to finish; true when one is ready for poll().
  bool wait_ready(double seconds) const;
  // Called on the worker thread as each job finishes (the window wakes its event loop with
  // it, so a finished run is drawn at once rather than at the next timeout).
  void set_on_ready(std::function<void()> fn) { on_ready_ = std::move(fn); }
  bool busy() const { return worker_.valid(); }
  // Blocks until the buffer warm-up after a scenario's first run is done (headless benches:
  // they time edits as a user makes them, not in the second after loading).
  void wait_warm();
  double busy_seconds() const;

  const std::shared_ptr<const RunData>& data() const { return data_; }
  // The last config error (empty when the last request succeeded).
  const std::string& error() const { return error_; }
  // Weights and unedited inputs kept between runs (and how often each was built).
  const RunInputs& kept_inputs() const { return *kept_; }
  // sgemm GFLOP/s measured by the first run (0 until then), for the status line.
  double sgemm_gflops() const { return sgemm_gflops_->load(); }

 private:
  struct Job {
    std::shared_ptr<const RunData> data;
    std::string error;
    uint64_t epoch = 0;  // the load() it was computed for
  };
  void launch();
  void warm_up(const RunData& data);

  Scenario scenario_;
  CellEdits edits_;
  std::string backend_ = "cpu";
  std::shared_ptr<const RunData> data_;
  std::string error_;
  std::shared_ptr<RunInputs> kept_ = std::make_shared<RunInputs>();  // shared with the worker
  std::shared_ptr<std::atomic<double>> sgemm_gflops_ = std::make_shared<std::atomic<double>>(0.0);
  std::function<void()> on_ready_;
  std::future<Job> worker_;  // the running job's result
  Task<void> runner_;        // the running job; finished before the next starts
  // After a scenario's first run: a second pass's worth of buffers, touched once, goes to the
  // engine's pool (prefault_buffers), so the first edit does not pay the page faults of
  // holding two traces at once (350-470 ms at the article's shape, against ~40 ms after).
  Task<void> warm_;
  std::shared_ptr<std::atomic<bool>> warm_done_ = std::make_shared<std::atomic<bool>>(true);
  uint64_t warmed_epoch_ = 0;
  bool pending_ = false;
  uint64_t generation_ = 0;
  uint64_t epoch_ = 0;  // bumped by load(): a run of the previous scenario is dropped
  std::chrono::steady_clock::time_point started_;
};

}  // namespace attnsim::app
