// Plain std::thread parallelism for the engine's row loops.
//
// Not OpenMP on purpose: after a parallel region libgomp's threads spin for a while, and on
// a 2-core machine they then compete with OpenBLAS's own threads in the very next sgemm
// (measured: about 5 ms of an 70 ms forward pass). Threads here exit when the work does.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace attnsim {

inline int default_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// Runs worker(t) for t in [0, threads), t = 0 on the calling thread; rethrows the first
// exception a worker threw once all have finished.
template <class Fn>
void run_workers(int threads, Fn&& worker) {
  std::exception_ptr first;
  std::mutex mutex;
  auto guarded = [&](int t) {
    try {
      worker(t);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!first) first = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(guarded, t);
  guarded(0);
  for (auto& th : pool) th.join();
  if (first) std::rethrow_exception(first);
}

// Calls body(begin, end) over [0, n) in chunks of `grain` items taken from a shared counter,
// on up to default_threads() threads (one thread when there is a single chunk).
template <class Fn>
void parallel_for(int64_t n, int64_t grain, Fn&& body) {
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = (n + grain - 1) / grain;
  const int threads = static_cast<int>(std::min<int64_t>(default_threads(), chunks));
  std::atomic<int64_t> next{0};
  run_workers(std::max(threads, 1), [&](int) {
    for (int64_t c; (c = next.fetch_add(1)) < chunks;) body(c * grain, std::min(n, (c + 1) * grain));
  });
}

}  // namespace attnsim
