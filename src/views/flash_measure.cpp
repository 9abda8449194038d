// The flash panel's measurement as a sliced task. See flash_measure.h.
#include "views/flash_measure.h"

#include <algorithm>

#include "engine/error.h"

namespace attnsim::app {

FlashBenchSpec measure_spec(int64_t batch, int64_t heads, int64_t d_model, bool bias, uint64_t seed, int64_t run_t) {
  FlashBenchSpec s;
  s.batch = batch;
  s.heads = heads;
  s.d_model = d_model;
  s.bias = bias;
  s.seed = seed;
  s.runs = kMeasureRuns;
  s.lengths.assign(std::begin(kMeasureLengths), std::end(kMeasureLengths));
  if (std::find(s.lengths.begin(), s.lengths.end(), run_t) == s.lengths.end()) s.lengths.insert(s.lengths.begin(), run_t);
  return s;
}

FlashMeasurement::~FlashMeasurement() { wait(); }

void FlashMeasurement::start(const FlashBenchSpec& spec) {
  wait();
  auto shared = shared_;
  std::shared_ptr<FlashBench> bench;
  {
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->snap = {};
    try {
      bench = std::make_shared<FlashBench>(spec);  // plans only: no allocation, quick
    } catch (const Error& e) {
      shared->snap.error = e.what();
      return;
    }
    shared->snap.running = true;
    shared->snap.rows = bench->rows();
    shared->snap.total = bench->steps_total();
  }
  // One pass per call; the rows are copied out after each (a few rows of a few numbers).
  worker_ = start_sliced([bench, shared] {
    const bool more = bench->step();
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->snap.rows = bench->rows();
    shared->snap.done = bench->steps_done();
    shared->snap.total = bench->steps_total();
    shared->snap.running = more;
    return more;
  });
}

MeasureSnapshot FlashMeasurement::snapshot() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->snap;
}

bool FlashMeasurement::running() const { return snapshot().running; }

void FlashMeasurement::wait() {
  if (worker_.valid()) worker_.get();
}

}  // namespace attnsim::app
