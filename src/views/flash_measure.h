// "Measure on this machine" in the flash panel: the engine's FlashBench (engine/flash_bench.h)
// as a sliced task (tasks.h): on the desktop a thread runs its passes back to back; in the
// browser, without threads, the main loop runs one pass between two frames. The panel reads
// a copy of the rows each frame, so it never waits on a pass.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/flash_bench.h"
#include "views/tasks.h"

namespace attnsim::app {

// The lengths the panel sweeps, after the run's own T: the sizes where S and P start to cost.
inline constexpr int64_t kMeasureLengths[] = {256, 512, 1024, 2048, 4096};
inline constexpr int kMeasureRuns = 5;

// The panel's spec: the run's batch, heads and d_model (and seed, bias) at its own T and the
// lengths above (the run's T first when it is not one of them).
FlashBenchSpec measure_spec(int64_t batch, int64_t heads, int64_t d_model, bool bias, uint64_t seed, int64_t run_t);

struct MeasureSnapshot {
  bool running = false;
  int64_t done = 0, total = 0;       // passes
  std::vector<FlashBenchRow> rows;   // as planned, filled in as passes finish
  std::string error;                 // the spec was refused (FlashBench's Error)
};

class FlashMeasurement {
 public:
  ~FlashMeasurement();
  void start(const FlashBenchSpec& spec);  // a measurement already running is finished first
  MeasureSnapshot snapshot() const;
  bool running() const;
  void wait();  // headless: until the last pass

 private:
  struct Shared {
    mutable std::mutex mutex;
    MeasureSnapshot snap;
  };
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  Task<void> worker_;
};

}  // namespace attnsim::app
