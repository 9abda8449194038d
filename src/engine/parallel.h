// Plain std::thread parallelism for the engine's row loops.
//
// Not OpenMP on purpose: after a parallel region libgomp's threads spin for a while, and on
// a 2-core machine they then compete with OpenBLAS's own threads in the very next sgemm
// (measured: about 5 ms of an 70 ms forward pass). The threads here spin for 100 µs after a
// job and then park on a condition variable (parallel.cpp), so an idle pool takes no core.
// Starting a fresh thread per loop instead cost a training step of the tiny model about a
// third of its time (clone, and glibc reading /sys for the core count on every call), and
// parking at once cost about a quarter (each job then waits for a kernel wake-up).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace attnsim {

// The cores this process may use (its CPU affinity: taskset, a cpuset), read once.
int default_threads();

namespace detail {
// Runs task(t) for t in [0, threads): t = 0 on the calling thread, the rest on the parked
// pool threads, and returns once all have. False, with nothing run, when another thread's
// job holds the pool (the app's worker beside its UI): the caller then starts threads of its own.
bool run_on_pool(int threads, const std::function<void(int)>& task);
}  // namespace detail

// What a worker inherits from the thread that started it; run_workers copies it in.
struct ThreadContext {
  // Set while a thread runs a worker of run_workers: a parallel_for inside one (a matrix
  // product inside a per-head loop) then runs on that thread instead of starting threads of
  // its own on cores that are already busy.
  bool in_worker = false;
  // Live FixedOrderProducts guards of the thread that started the work (gemm_fixed.h).
  int fixed_order = 0;
};
inline thread_local ThreadContext thread_context;

// Runs worker(t) for t in [0, threads), t = 0 on the calling thread; rethrows the first
// exception a worker threw once all have finished.
template <class Fn>
void run_workers(int threads, Fn&& worker) {
  std::exception_ptr first;
  std::mutex mutex;
  ThreadContext inherited = thread_context;  // copied into each worker
  inherited.in_worker = true;
  auto guarded = [&](int t) {
    const ThreadContext own = thread_context;
    thread_context = inherited;
    try {
      worker(t);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!first) first = std::current_exception();
    }
    thread_context = own;
  };
  if (threads <= 1) {
    guarded(0);
  } else if (!detail::run_on_pool(threads, guarded)) {
    std::vector<std::thread> own;
    for (int t = 1; t < threads; ++t) own.emplace_back(guarded, t);
    guarded(0);
    for (auto& th : own) th.join();
  }
  if (first) std::rethrow_exception(first);
}

// Calls body(begin, end) over [0, n) in chunks of `grain` items taken from a shared counter,
// on up to default_threads() threads (one thread when there is a single chunk, or when
// called from inside a worker).
template <class Fn>
void parallel_for(int64_t n, int64_t grain, Fn&& body) {
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = (n + grain - 1) / grain;
  const int threads = thread_context.in_worker ? 1 : static_cast<int>(std::min<int64_t>(default_threads(), chunks));
  std::atomic<int64_t> next{0};
  run_workers(std::max(threads, 1), [&](int) {
    for (int64_t c; (c = next.fetch_add(1)) < chunks;) body(c * grain, std::min(n, (c + 1) * grain));
  });
}

}  // namespace attnsim
