// The tiled path against the standard one on this machine: wall time beside the IO model's
// bytes (flash.h), at a sweep of sequence lengths. What `attnsim-cli flash --bench N
// --sweep-tq ...` prints and the app's flash panel measures ("Measure on this machine").
//
// One row per length T (self-attention, Tq = Tk = T, no mask: the IO model's counts in
// lesson 8 are without one), at the spec's batch, heads and d_model, with nn.Linear weights
// and standard normal inputs of the spec's seed (mha.h init_weights, random_inputs):
//   standard   forward()         (mha.h)   every intermediate held, S and P included
//   tiled      flash_forward()   (flash.h) at default_flash_blocks, sized for this L2
// Each row runs the two paths alternately, `runs` times each, and keeps every time: one
// step() is one pass, so a caller without threads (the web build) gives each frame one pass.
// Beside the times:
//   io_standard, io_tiled   the IO model's slow-memory reads and writes (elements); io_tiled
//                           is what the tiled core counted while running (= the closed form)
//   score_bytes             bytes the standard trace held in its score-sized steps (scores,
//                           scores_scaled, scores_masked, alpha, alpha_dropped, mask): the
//                           (Tq, Tk) matrices it really allocated, not a model of them
//   tiled_core_bytes        what the tiled core held instead (FlashStats::core_bytes)
// Before anything is allocated, each row predicts the memory its larger pass needs (trace
// and core, plus the inputs and weights held for the row) and is refused, with the figures,
// when that is over the limit or when the sizes overflow the prediction itself.
//
// Times on a CPU are not a GPU's: the "slow memory" is RAM and the "fast memory" the caches
// the tiles were sized for (flash_l2_bytes), and the standard path's sgemm is OpenBLAS's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flash.h"

namespace attnsim {

inline constexpr int kFlashBenchMaxRuns = 1000;  // per path and length
inline constexpr size_t kFlashBenchMaxLengths = 64;

struct FlashBenchSpec {
  int64_t batch = 1, heads = 8, d_model = 512;
  bool bias = true;
  uint64_t seed = 0;
  std::vector<int64_t> lengths;  // T of each row, in order
  int runs = 5;                  // timed passes per path and row (the median is reported)
  int threads = 0;               // the tiled core's workers; 0 = all cores (as flash_forward)
  int64_t mem_limit = 0;         // bytes; 0 = effective_mem_limit (75 % of physical memory)
};

struct FlashBenchRow {
  int64_t t = 0;
  FlashShape shape;              // the tiled path's sizes, blocks resolved (flash_shape)
  int64_t needed_bytes = 0;      // predicted peak of the row (0 when the prediction overflowed)
  std::string refused;           // not run: why, with the figures; empty otherwise
  FlashIo io_standard;           // flash_io_standard(shape)
  FlashIo io_tiled;              // the core's counters (closed form until the first tiled pass)
  int64_t score_bytes = -1;      // from the first standard pass; -1 before it
  int64_t tiled_core_bytes = -1; // from the first tiled pass; -1 before it
  std::vector<double> standard_seconds, tiled_seconds;  // one per pass, in the order run

  double standard_median() const;  // seconds; 0 before any pass
  double tiled_median() const;
  // 4 bytes per element: the IO model's traffic in bytes.
  int64_t standard_io_bytes() const { return 4 * (io_standard.reads + io_standard.writes); }
  int64_t tiled_io_bytes() const { return 4 * (io_tiled.reads + io_tiled.writes); }
};

double median_of(std::vector<double> values);  // 0 for none
// Bytes a standard trace allocated in its score-sized steps (the names above; views and
// skipped steps cost nothing).
int64_t score_step_bytes(const Trace& trace);

class FlashBench {
 public:
  // Plans every row (shapes, IO model, memory; refusals) and allocates nothing. Throws Error
  // for a spec no row could run: no lengths or more than kFlashBenchMaxLengths, a length
  // below 1, runs outside 1..kFlashBenchMaxRuns, sizes below 1, heads not dividing d_model.
  explicit FlashBench(const FlashBenchSpec& spec);

  // Runs the next timed pass (standard and tiled alternate within a row, standard first);
  // false when every row that was not refused has its runs. An Error from a pass (memory
  // the prediction did not foresee) refuses the rest of that row and is not rethrown.
  bool step();
  bool done() const { return steps_done_ >= steps_total_; }
  int64_t steps_done() const { return steps_done_; }
  int64_t steps_total() const { return steps_total_; }  // 2 · runs · rows not refused

  const FlashBenchSpec& spec() const { return spec_; }
  const std::vector<FlashBenchRow>& rows() const { return rows_; }
  // The first refusal, "" when every row runs (the CLI refuses the whole sweep on it).
  std::string first_refusal() const;

 private:
  MhaConfig config_for(int64_t t) const;

  FlashBenchSpec spec_;
  std::vector<FlashBenchRow> rows_;
  MhaWeights weights_;       // built at the first pass: the same for every row
  MhaInputs inputs_;         // the current row's
  size_t row_ = 0;           // the row being run
  int64_t inputs_for_ = -1;  // the row inputs_ belong to
  int64_t steps_done_ = 0, steps_total_ = 0;
};

}  // namespace attnsim
