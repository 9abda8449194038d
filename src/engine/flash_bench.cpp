// Timing the tiled path against the standard one. See flash_bench.h.
#include "flash_bench.h"

#include <algorithm>
#include <chrono>
#include <new>

#include "checked.h"
#include "cost.h"
#include "error.h"
#include "mha.h"

namespace attnsim {

namespace {

std::string n2s(int64_t v) { return std::to_string(v); }

// The standard trace's steps of shape (B,h,Tq,Tk) (the mask: (B,1,Tq,Tk) bool), by name.
const char* const kScoreSteps[] = {"scores", "scores_scaled", "mask", "scores_masked", "alpha", "alpha_dropped"};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int64_t score_step_bytes(const Trace& t) {
  int64_t bytes = 0;
  for (const char* name : kScoreSteps)
    if (const Step* s = t.find(name)) bytes += s->new_bytes;
  return bytes;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double FlashBenchRow::standard_median() const { return median_of(standard_seconds); }
double FlashBenchRow::tiled_median() const { return median_of(tiled_seconds); }

MhaConfig FlashBench::config_for(int64_t t) const {
  MhaConfig c;
  c.batch = spec_.batch;
  c.heads = spec_.heads;
  c.d_model = spec_.d_model;
  c.tq = c.tk = t;
  c.bias = spec_.bias;
  c.seed = spec_.seed;
  c.mem_limit = spec_.mem_limit;
  return c;
}

FlashBench::FlashBench(const FlashBenchSpec& spec) : spec_(spec) {
  if (spec.lengths.empty() || spec.lengths.size() > kFlashBenchMaxLengths)
    throw Error("the sweep needs 1 to " + n2s(kFlashBenchMaxLengths) + " sequence lengths, got " +
                n2s(static_cast<int64_t>(spec.lengths.size())));
  if (spec.runs < 1 || spec.runs > kFlashBenchMaxRuns)
    throw Error("the sweep runs each path 1 to " + n2s(kFlashBenchMaxRuns) + " times, got " + n2s(spec.runs));
  if (spec.batch < 1 || spec.heads < 1 || spec.d_model < 1)
    throw Error("the sweep's batch, heads and d_model must be positive, got " + n2s(spec.batch) + ", " +
                n2s(spec.heads) + ", " + n2s(spec.d_model));
  if (spec.d_model % spec.heads != 0)
    throw Error("d_model " + n2s(spec.d_model) + " is not a multiple of heads " + n2s(spec.heads));
  for (int64_t t : spec.lengths)
    if (t < 1) throw Error("a sequence length of the sweep must be at least 1, got " + n2s(t));

  FlashOptions o;
  o.threads = spec.threads;
  for (int64_t t : spec.lengths) {
    FlashBenchRow row;
    row.t = t;
    const MhaConfig c = config_for(t);
    try {
      validate(c);
      row.shape = flash_shape(c, o);
      row.io_standard = flash_io_standard(row.shape);
      row.io_tiled = flash_io_tiled_no_skip(row.shape);
      // One pass at a time: the larger of the two, plus the weights held for every row (the
      // inputs are in both predictions: the trace's first step holds them).
      const Size trace = predict_trace_bytes(c), tiled = predict_flash_bytes(c, o);
      row.needed_bytes = (Size(predict_weight_bytes(c.d_model, c.bias)) + (trace < tiled ? tiled : trace)).value();
      const int64_t limit = effective_mem_limit(c);
      if (row.needed_bytes > limit)
        row.refused = "T=" + n2s(t) + " needs " + human_bytes(row.needed_bytes) + " (" + format_count(row.needed_bytes) +
                      " bytes), over the limit of " + human_bytes(limit);
    } catch (const Error& e) {
      row.needed_bytes = 0;
      row.refused = "T=" + n2s(t) + ": " + e.what();
    }
    if (row.refused.empty()) steps_total_ += 2 * static_cast<int64_t>(spec.runs);
    rows_.push_back(std::move(row));
  }
}

std::string FlashBench::first_refusal() const {
  for (const FlashBenchRow& r : rows_)
    if (!r.refused.empty()) return r.refused;
  return "";
}

bool FlashBench::step() {
  const size_t runs = static_cast<size_t>(spec_.runs);
  auto finished = [&](const FlashBenchRow& r) {
    return !r.refused.empty() || (r.standard_seconds.size() >= runs && r.tiled_seconds.size() >= runs);
  };
  while (row_ < rows_.size() && finished(rows_[row_])) ++row_;
  if (row_ >= rows_.size()) {
    inputs_ = {};  // nothing left to run: give the memory back
    return false;
  }
  FlashBenchRow& row = rows_[row_];
  const MhaConfig c = config_for(row.t);
  const int64_t left = static_cast<int64_t>(2 * runs - row.standard_seconds.size() - row.tiled_seconds.size());
  try {
    if (!weights_.W_Q.weight.defined()) weights_ = init_weights(spec_.d_model, spec_.bias, spec_.seed);
    if (inputs_for_ != static_cast<int64_t>(row_)) {
      inputs_ = {};  // the previous row's first: the two are never held together
      inputs_ = random_inputs(c);
      inputs_for_ = static_cast<int64_t>(row_);
    }
    const bool standard = row.standard_seconds.size() <= row.tiled_seconds.size();
    if (standard) {
      const auto t0 = std::chrono::steady_clock::now();
      const ForwardResult r = forward(c, weights_, inputs_);
      row.standard_seconds.push_back(seconds_since(t0));  // the pass, not the trace's release
      if (row.score_bytes < 0) row.score_bytes = score_step_bytes(r.trace);
    } else {
      FlashOptions o;
      o.threads = spec_.threads;
      const auto t0 = std::chrono::steady_clock::now();
      const FlashResult r = flash_forward(c, weights_, inputs_, o);
      row.tiled_seconds.push_back(seconds_since(t0));
      row.shape = r.core.stats.shape;
      row.io_tiled = r.core.stats.io;
      row.tiled_core_bytes = r.core.stats.core_bytes;
    }
    ++steps_done_;
  } catch (const std::exception& e) {  // Error, or bad_alloc past what was predicted
    const bool memory = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
    row.refused = "T=" + n2s(row.t) + ": " + (memory ? std::string("out of memory during a pass") : e.what());
    steps_total_ -= left;
    inputs_ = {};
    inputs_for_ = -1;
  }
  if (finished(row)) {
    inputs_ = {};
    inputs_for_ = -1;
  }
  return !done();
}

}  // namespace attnsim
